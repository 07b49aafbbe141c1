package policy

import "testing"

// TestCitedSignatures is issue 18.4: every signature SECURITY.md cites,
// exactly as cited, one row each: the dotted name and the dotless (or
// "_") form the optional dot allows, at any depth, as dotfiles
// repositories (rcm) store them.
func TestCitedSignatures(t *testing.T) {
	rows := map[string][]string{
		`^\.?env$`:                             {".env", "env", "dotfiles/env"},
		`^\.?git-credentials$`:                 {".git-credentials", "git-credentials"},
		`^\.?gitconfig$`:                       {".gitconfig", "dotfiles/gitconfig"},
		`^.*_rsa$ and kin`:                     {"deploy_rsa", "x_dsa", "k_ecdsa", "k_ed25519"},
		`^key(pair)?$ (extension)`:             {"server.key", "server.keypair"},
		`^key(store|ring)$, ^kdbx?$`:           {"a.keystore", "a.keyring", "a.kdb", "a.kdbx"},
		`\.?aws/credentials$`:                  {".aws/credentials", "aws/credentials", "dotfiles/aws/credentials", "my-aws/credentials"},
		`^\.?s3cfg$`:                           {".s3cfg", "s3cfg"},
		`^\.?dockercfg$`:                       {".dockercfg", "dockercfg"},
		`^\.?tugboat$`:                         {".tugboat", "tugboat"},
		`\.?gem/credentials$`:                  {".gem/credentials", "gem/credentials"},
		`config/hub$`:                          {".config/hub", "config/hub", "dotfiles/config/hub"},
		`doctl/config.yaml$`:                   {"doctl/config.yaml", ".config/doctl/config.yaml"},
		`^(\.|_)?netrc$`:                       {".netrc", "_netrc", "netrc"},
		`^\.?npmrc$`:                           {".npmrc", "npmrc"},
		`^\.?pgpass$`:                          {".pgpass", "pgpass"},
		`^\.?htpasswd$`:                        {".htpasswd", "htpasswd"},
		`^\.?muttrc$`:                          {".muttrc", "muttrc"},
		`^\.?(bash_|zsh_|sh_|z)?history$`:      {".history", "history", ".bash_history", "bash_history", "zsh_history", "sh_history", ".zhistory", "zhistory"},
		`^\.?mysql_history$ and kin`:           {".mysql_history", "mysql_history", "psql_history", "irb_history"},
		`^sftp-config(\.json)?$`:               {"sftp-config", "sftp-config.json"},
		`^\.?dbeaver-data-sources.xml$`:        {"dbeaver-data-sources.xml", ".dbeaver-data-sources.xml"},
		`terraform.tfvars (gitrob)`:            {"terraform.tfvars"},
		`gitleaks pkcs12-file`:                 {"a.p12", "a.pfx"},
		`shhgit .ppk`:                          {"server.ppk"},
		`cargo credentials.toml, gh hosts.yml`: {".cargo/credentials.toml", ".config/gh/hosts.yml"},
	}
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for sig, names := range rows {
		for _, n := range names {
			if _, ok := p.Denied(n); !ok {
				t.Errorf("%s: Denied(%q) = false", sig, n)
			}
		}
	}
}

// TestStoredForms: a secret under the name a dotfiles manager stores it
// as (chezmoi's dot_ and attribute prefixes and suffixes, stow's dot-), or
// as a copy beside the original, is denied; ordinary names that look a
// little like them are not.
func TestStoredForms(t *testing.T) {
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"dot_env", "dot_netrc", "private_dot_netrc", "dot_aws/credentials", "private_dot_aws/private_credentials",
		"private_dot_ssh/private_id_rsa", "encrypted_private_dot_env.age", "dot_config/gh/hosts.yml.tmpl", "dot_gem/credentials",
		"dot-netrc", "stow/dot-ssh/config", "private_dot_ssh", "literal_id_rsa",
		"id_rsa.bak", "id_rsa~", "id_rsa.old", ".env~", ".env.bak", "server.pem.orig", ".id_rsa.swp", "id_ed25519.backup",
		".env-prod", ".env_prod", "prod.env", "production.env", "credentials.json.bak", "id_rsa_prod", ".aws.bak/credentials"} {
		if _, ok := p.Denied(d); !ok {
			t.Errorf("Denied(%q) = false", d)
		}
		if _, ok := p.WriteDenied(d); !ok {
			t.Errorf("WriteDenied(%q) = false", d)
		}
	}
	for _, a := range []string{"dot_product.go", "notes.txt.bak", "main.go~", "dot_", "private_notes.md", "README.old", "my-project/main.go",
		"src/dot_test.go", "docs/env-vars.md"} {
		if r, ok := p.Denied(a); ok {
			t.Errorf("Denied(%q) = true (rule %q)", a, r)
		}
	}
	if n := testingAllocs(func() { p.Denied("src/internal/policy/policy_test.go") }); n != 0 {
		t.Errorf("Denied allocates %.0f times for an ordinary name with _", n)
	}
	// The listing's per-entry check sees stored forms too.
	if _, ok := p.DeniedChild("home", "dot_netrc"); !ok {
		t.Error(`DeniedChild("home", "dot_netrc") = false`)
	}
}

// TestWidenedFamilies: issue 18.4's families, one example or more each.
func TestWidenedFamilies(t *testing.T) {
	rows := map[string][]string{
		"cloud and infrastructure CLIs": {".oci/config", ".databrickscfg", ".boto", ".config/gcloud/application_default_credentials.json",
			".config/gcloud/legacy_credentials/me/adc.json", ".terraform.d/credentials.tfrc.json", ".pulumi/credentials.json",
			".fly/config.yml", ".config/hcloud/cli.toml", ".config/linode-cli", ".bluemix/config.json", ".aliyun/config.json",
			".tsh/keys", ".snowflake/connections.toml", ".config/netlify/config.json", ".wrangler/config/default.toml",
			".config/glab-cli/config.yml", ".config/openstack/clouds.yaml", ".dbt/profiles.yml", ".config/rclone/rclone.conf", ".config/sops/age/keys.txt"},
		"package managers": {"auth.json", ".composer/auth.json", ".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
			".nuget/NuGet/NuGet.Config", ".bundle/config", ".config/pip/pip.conf", "venv/pip.conf", ".pub-cache/credentials.json",
			".config/dart/pub-credentials.json"},
		"databases": {".my.cnf", ".mylogin.cnf", ".pg_service.conf", ".cassandra/cqlshrc", ".odbc.ini", ".influxdbv2/configs"},
		"notebooks": {".local/share/jupyter/runtime/kernel-1.json", "jpserver-123.json", "jpserver-123-open.html", "nbserver-9.json",
			".jupyter/jupyter_server_config.json"},
		"browsers": {"Chrome/Default/Login Data", "Default/Login Data For Account", "Default/Web Data", "Chrome/Local State",
			"Default/Cookies", "Default/Network/Cookies", "ff.default-release/logins.json", "p/key4.db", "p/key3.db",
			"p/signons.sqlite", "p/cookies.sqlite", "Cookies.binarycookies"},
		"histories": {".python_history", ".node_repl_history", ".sqlite_history", ".local/share/fish/fish_history", ".histfile",
			".lesshst", ".viminfo", ".Rhistory", ".octave_hist", ".dbshell", ".ipython/profile_default/history.sqlite",
			".local/share/atuin/history.db", ".julia/logs/repl_history.jl", ".erlang-history/x", ".clickhouse-client-history",
			".ghc/ghci_history", ".zsh_sessions/a.history", ".bash_sessions/x"},
	}
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for fam, names := range rows {
		for _, n := range names {
			if _, ok := p.Denied(n); !ok {
				t.Errorf("%s: Denied(%q) = false", fam, n)
			}
		}
	}
	for _, a := range []string{"src/cookies/cookies.go", "web/history.md", "docs/settings.xml", "gradle.properties", "config/settings.py"} {
		if r, ok := p.Denied(a); ok {
			t.Errorf("Denied(%q) = true (rule %q)", a, r)
		}
	}
}

func testingAllocs(f func()) float64 { return testing.AllocsPerRun(100, f) }

// TestCodeFileFamilies is issue 18.3: each family of files that run code,
// as SECURITY.md tables it, with its decision: never written (refused
// before anyone is asked, in any spelling) or written after the warning
// that names the tool.
func TestCodeFileFamilies(t *testing.T) {
	never := map[string][]string{
		"editors and agents": {".zed/settings.json", ".zed/tasks.json", ".continue/config.yaml", ".windsurf/workflows/x.md",
			".roo/mcp.json", ".kiro/settings/mcp.json", ".kiro/hooks/x.kiro.hook", ".amazonq/mcp.json", ".junie/mcp/mcp.json",
			"opencode.json", "opencode.jsonc", ".opencode/command/x.md", ".aider.conf.yml", ".gemini/settings.json", ".codex/config.toml"},
		"package-manager hooks and preloads": {".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".venv/lib/python3.12/site-packages/evil.pth",
			"sitecustomize.py", "pip.conf"},
		"linters and formatters that are code": {"eslint.config.js", "eslint.config.mjs", "web/eslint.config.ts", ".eslintrc.cjs",
			"prettier.config.js", ".prettierrc.mjs", ".prettierrc.ts", "stylelint.config.cjs", ".stylelintrc.js"},
		"shell and REPL startup": {".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshenv", ".zlogin", ".zlogout",
			".config/fish/config.fish", ".inputrc", ".pythonrc", ".irbrc", ".pryrc", ".psqlrc", ".sqliterc", ".Rprofile", ".iex.exs", ".ghci", ".gdbinit"},
		"environment on cd":  {".envrc", "mise.toml", ".mise.toml", "mise.local.toml", ".config/mise.toml", ".mise/tasks/build"},
		"toolchains by path": {"rust-toolchain", "rust-toolchain.toml"},
		"git and its hooks":  {".gitattributes", ".husky/pre-commit", "lefthook.yml"},
	}
	warned := map[string][]string{
		"compose overrides": {"docker-compose.override.yml", "compose.override.yaml", "deploy/docker-compose.override.yaml"},
		"toolchain pins":    {".tool-versions", ".nvmrc", ".node-version", ".python-version", ".ruby-version", ".terraform-version", ".sdkmanrc"},
		"build files":       {"Makefile", "package.json", "build.rs", "Dockerfile", ".github/workflows/ci.yml"},
	}
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for fam, paths := range never {
		for _, path := range paths {
			if _, ok := p.WriteDenied(path); !ok {
				t.Errorf("%s: WriteDenied(%q) = false", fam, path)
			}
			if _, ok := RunsCode(path); !ok {
				t.Errorf("%s: RunsCode(%q) = false", fam, path)
			}
		}
	}
	for fam, paths := range warned {
		for _, path := range paths {
			if r, ok := p.WriteDenied(path); ok {
				t.Errorf("%s: WriteDenied(%q) = true (rule %q); it is written after the warning", fam, path, r)
			}
			if _, ok := RunsCode(path); !ok {
				t.Errorf("%s: RunsCode(%q) = false", fam, path)
			}
		}
	}
	for _, path := range []string{".prettierrc.json", ".prettierrc", ".eslintignore", "go.mod", "main.py", "docs/bashrc.md", "src/profile.go"} {
		if _, ok := p.WriteDenied(path); ok {
			t.Errorf("WriteDenied(%q) = true", path)
		}
	}
}

// TestAllowStoredForm: --allow naming a copy as written opens that copy
// only.
func TestAllowStoredForm(t *testing.T) {
	p, err := New(nil, []string{"id_rsa.bak", "dot_env"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"id_rsa.bak", "keys/id_rsa.bak", "chezmoi/dot_env"} {
		if r, ok := p.Denied(a); ok {
			t.Errorf("with --allow, Denied(%q) = true (rule %q)", a, r)
		}
	}
	for _, d := range []string{"id_rsa", "id_rsa.old", ".env", "dot_env.tmpl"} {
		if _, ok := p.Denied(d); !ok {
			t.Errorf("Denied(%q) = false", d)
		}
	}
	if _, ok := p.DeniedChild("keys", "id_rsa.bak"); ok {
		t.Error("DeniedChild ignores --allow for a copy")
	}
}

// TestCredentialFilesAtDocumentedPaths is issue 29.4: credential files at
// the paths their tools document, each family of SECURITY.md's issue 29
// rows, are denied wherever the root is (home, or a dotfiles copy of it);
// ordinary project files with like names are not.
func TestCredentialFilesAtDocumentedPaths(t *testing.T) {
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{
		".config/git/credentials", "dotfiles/git/credentials",
		".msmtprc", ".config/msmtp/config", ".fetchmailrc", ".mbsyncrc", ".config/isyncrc", ".authinfo", ".authinfo.gpg",
		".netrc.gpg", ".offlineimaprc", ".config/offlineimap/config", ".neomuttrc", ".config/neomutt/neomuttrc",
		".config/mutt/muttrc", ".config/aerc/accounts.conf", ".config/himalaya/config.toml", ".getmail/getmailrc", ".mailrc",
		"etc/wireguard/wg0.conf", "wg0.conf", "vpn/office.nmconnection", "etc/NetworkManager/system-connections/home",
		"etc/ipsec.secrets", "var/lib/tailscale/tailscaled.state", "var/lib/zerotier-one/identity.secret", "client.ovpn",
		".sbt/.credentials", ".ivy2/.credentials", ".lein/credentials.clj.gpg", ".config/pypoetry/auth.toml",
		".hex/hex.config", ".jfrog/jfrog-cli.conf.v6", ".config/helm/registry/config.json", ".config/helm/repositories.yaml",
		"etc/nix/netrc", ".config/tea/config.yml", ".gradle/gradle.properties", ".m2/settings-security.xml",
		".config/op/config", ".op/config", "Library/Application Support/Bitwarden CLI/data.json", ".config/Bitwarden CLI/data.json",
		".doppler/.doppler.yaml", ".infisical/infisical-config.json", ".lpass/session_uid", ".password-store/web/site.gpg",
		".cloudflared/cert.json", ".cloudflared/0e5d.json", ".config/ngrok/ngrok.yml", ".ngrok2/ngrok.yml", "frpc.toml",
		"kubeconfig", "prod.kubeconfig", ".circleci/cli.yml", ".travis/config.yml", ".railway/config.json",
		".render/cli.yaml", ".supabase/access-token", ".config/configstore/firebase-tools.json", ".config/configstore/snyk.json",
		".expo/state.json", ".twilio-cli/config.json", ".config/stripe/config.toml", ".sentryclirc", ".vultr-cli.yaml",
		".config/scw/config.yaml", "ovh.conf", ".cache/huggingface/token", ".cache/huggingface/stored_tokens",
		".kaggle/kaggle.json", ".mc/config.json", ".saml2aws",
		".claws-mail/passwordstorerc", ".config/vdirsyncer/config", "etc/openvpn/client/work.conf", "etc/openvpn/home.conf",
		".config/openfortivpn/config", "etc/vpnc/default.conf", "etc/swanctl/swanctl.conf", "etc/swanctl/conf.d/x.conf",
		".config/nix/nix.conf", ".cabal/config", ".config/cabal/config", ".zrok/environment.json", ".awsvault/keys/x",
		".config/google-chrome/Profile 1/Cookies", ".config/Slack/Network/Cookies", ".config/chromium/Guest Profile/Cookies",
		"Default/Cookies-journal", "Default/Login Data-journal", "ff.default/cookies.sqlite-wal",
		"Library/Keychains/login.keychain-db", "Library/Keychains/x", "tmp/krb5cc_1000", "etc/krb5.keytab",
	} {
		if _, ok := p.Denied(n); !ok {
			t.Errorf("Denied(%q) = false", n)
		}
	}
	for _, a := range []string{"src/cookies/cookies.go", "docs/wireguard.md", "op/main.go", "config/auth.go", "vpn/README.md", "kube.go", "cmd/tea/main.go"} {
		if r, ok := p.Denied(a); ok {
			t.Errorf("Denied(%q) = true (rule %q)", a, r)
		}
	}
}
