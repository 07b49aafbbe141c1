// Package policy decides which paths inside the sandbox root the model may
// touch: the lexical rules for a path as the model wrote it, and the
// deny-list of secrets and tool-configuration files.
//
// It is the single place these decisions are made. The confined filesystem
// (host/confine) applies them to every component it resolves, including the
// targets of symlinks, so the guest cannot route around them; the argument
// check (host/toolspec) applies them early for clear messages; the write gate
// applies the stricter [Policy.WriteDenied].
//
// # Matching
//
// Rules match one path component (a base name) unless they contain a "/".
// Matching is case-insensitive under full Unicode case folding, blind to
// NFC/NFD and to invisible format characters, and ignores trailing dots and
// spaces, because Windows and macOS file systems treat ".ENV", ".env.",
// ".env " and ".awſ" (long s) as the same file as ".env" or ".aws". A path
// already folded (lower-case ASCII, nearly every path) takes an
// allocation-free path, and only non-ASCII components pay for Unicode
// folding. Allow patterns (--allow) win over deny patterns.
//
// # Limits
//
// The deny-list is a list of names (and of the names a stored or copied
// file stands for, see storedForm). It does not know what is inside a
// file: a secret stored in notes.txt is readable, and only host/redact's
// rules for secrets by content stand between it and the model. The
// never-write list is the codeFiles table; git directories and git
// configuration are recognised by structure and content ([GitDir],
// [GitConfigCommand]), what the root's configs name as code by reading
// them ([ConfigNamed]), a file that is not plain data by its shape
// ([NotPlain]), and moat's own files by absolute path ([Policy.Protect]),
// all of which the gate applies. Hard links to a denied file under
// another name are not recognised by name (the write gate refuses files with
// more than one link; reading them is a documented limit, see SECURITY.md).
package policy

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/moatdev/moat/guest/proto"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// defaultDeny is the built-in deny-list: credentials, key stores, command
// histories and repository internals that a model has no business reading.
// A rule without "/" matches a base name anywhere in the tree; one with "/"
// matches that path at any depth. The families and where each comes from
// (gitrob's and shhgit's path signatures, gitleaks' path rules, the tools'
// own documentation) are tabled in SECURITY.md; keep the two in step.
var defaultDeny = []string{
	// dotenv and direnv files; gitrob's "^\.?env$" also matches the
	// dotless name dotfiles managers store; "*.env" is the per-environment
	// file compose's env_file names (prod.env)
	".env", "env", ".env.*", ".env-*", ".env_*", "*.env", ".envrc",
	// repository internals: hooks, config with remote credentials, objects;
	// "*.git" is a bare repository (proj.git/config, proj.git/hooks)
	".git", "*.git", ".git-credentials", "git-credentials", ".gitconfig", "gitconfig",
	// SSH: the folder, OpenSSH's key names (ssh-keygen -t, including the
	// FIDO "_sk" keys), any "*_rsa" style key, PuTTY keys
	".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
	"*_rsa", "*_dsa", "*_ecdsa", "*_ed25519", "*_ecdsa_sk", "*_ed25519_sk", "*.ppk",
	// private keys, key bundles and key stores; age's identities
	"*.pem", "*.key", "*.keypair", "*.p12", "*.pfx", "*.pkcs12", "*.jks", "*.keystore", "*.keychain", "*.keyring",
	"*.kdb", "*.kdbx", "*.psafe3", "*.agilekeychain", "*.kwallet", "*.bek", "*.tpm", "*.fve", "otr.private_key",
	"age/keys.txt",
	// cloud and infrastructure CLIs' credential stores (gitrob's path
	// signatures "\.?aws/credentials$", "\.?gem/credentials$",
	// "config/hub$" and "doctl/config.yaml$" match any path ending so)
	".aws", "*aws/credentials", ".azure", ".kube", ".docker", ".gnupg", ".dockercfg", "dockercfg", ".s3cfg", "s3cfg",
	".tugboat", "tugboat", ".vault-token", ".oci", ".databrickscfg", ".boto", ".bluemix", ".aliyun", ".tsh", ".snowflake",
	".cargo/credentials", ".cargo/credentials.toml", "credentials.toml", "*gem/credentials",
	"gh/hosts.yml", "*config/hub", "*doctl/config.yaml", "gcloud/credentials.db", "gcloud/access_tokens.db",
	"gcloud/legacy_credentials", "application_default_credentials.json", "credentials.tfrc.json", "pulumi/credentials.json",
	".fly/config.yml", "hcloud/cli.toml", "linode-cli", ".linode-cli", "netlify/config.json", "com.vercel.cli",
	".wrangler/config", "glab-cli/config.yml", "openstack/clouds.yaml", "openstack/secure.yaml", ".dbt/profiles.yml",
	"rclone.conf", ".rclone.conf",
	"credentials.json", "credentials.xml", "secrets.yaml", "secrets.yml", "heroku.json",
	// package managers' tokens and passwords (gitrob's "^\.?npmrc$" and
	// kin match the dotless names too)
	".netrc", "netrc", "_netrc", ".npmrc", "npmrc", ".pypirc", "auth.json", ".m2/settings.xml", "settings-security.xml",
	".gradle/gradle.properties", "nuget/nuget.config", ".bundle/config", "pip.conf", "pip.ini", "pub-credentials.json",
	".pub-cache/credentials.json",
	// databases' passwords and connections
	".pgpass", "pgpass", "pg_service.conf", ".pg_service.conf", ".my.cnf", ".mylogin.cnf", "cqlshrc", ".cqlshrc",
	"odbc.ini", ".odbc.ini", ".influxdbv2/configs",
	// network tools' passwords
	".htpasswd", "htpasswd", "proftpdpasswd", ".esmtprc", ".muttrc", "muttrc",
	// notebooks: Jupyter's runtime files hold its server token and kernel
	// keys, its config folder the server password
	"jupyter/runtime", "jpserver-*", "nbserver-*", ".jupyter",
	// browsers' password, cookie and key stores (Chromium's and Firefox's
	// profile files; Safari's cookies)
	"login data", "login data for account", "web data", "local state", "default/cookies", "network/cookies",
	"logins.json", "logins-backup.json",
	"key3.db", "key4.db", "signons.sqlite", "cookies.sqlite", "*.binarycookies",
	// infrastructure state and variables (Terraform keeps secrets in both)
	"*.tfstate", "*.tfstate.*", "*.tfvars", "*.tfvars.json", ".terraformrc", "terraform.rc",
	// command histories: what was typed, passwords included (gitrob's
	// "^\.?(bash_|zsh_|sh_|z)?history$", "^\.?mysql_history$",
	// "^\.?psql_history$", "^\.?irb_history$", widened to every
	// ".NAME_history" and the REPLs' own files)
	".*_history", ".*-history", ".history", "history", ".zhistory", "zhistory", "bash_history", "zsh_history",
	"sh_history", "mysql_history", "psql_history", "irb_history", "fish_history", "ghci_history", ".histfile",
	".lesshst", ".viminfo", ".rhistory", ".octave_hist", ".dbshell", "history.sqlite", "atuin/history.db",
	"repl_history.jl", ".zsh_sessions", ".bash_sessions",
	// remote-deployment and connection configurations that hold passwords
	"sftp-config.json", "sftp-config", ".ftpconfig", ".remote-sync.json", "deployment-config.json",
	"filezilla.xml", "recentservers.xml", "*.ovpn", "*.rdp", "dbeaver-data-sources.xml", ".dbeaver-data-sources.xml",
	"robomongo.json", "secret_token.rb",
	// issue 29: credential files at their tools' documented paths that
	// the families above missed.
	// git's credential store at its second default path
	// ($XDG_CONFIG_HOME/git/credentials)
	"git/credentials",
	// mail clients' passwords (msmtp, fetchmail, isync/mbsync, Emacs'
	// auth-source, OfflineIMAP, NeoMutt, aerc, himalaya, getmail, mailx)
	".msmtprc", "msmtprc", "msmtp/config", ".fetchmailrc", "fetchmailrc", ".mbsyncrc", "mbsyncrc", "isyncrc", "isync/mbsyncrc",
	".authinfo", "authinfo", ".authinfo.gpg", "authinfo.gpg", ".netrc.gpg", ".offlineimaprc", "offlineimaprc", "offlineimap/config",
	".neomuttrc", "neomuttrc", "neomutt/neomuttrc", "mutt/muttrc", "aerc/accounts.conf", "himalaya/config.toml",
	".getmail", "getmail/getmailrc", ".mailrc", "*claws-mail/passwordstorerc", "*claws-mail/accountrc", "vdirsyncer/config",
	// VPN configurations and state (WireGuard, NetworkManager's
	// connections, strongSwan, Tailscale, ZeroTier; OpenVPN's *.ovpn is
	// above)
	"wg*.conf", "wireguard", "*.nmconnection", "system-connections", "ipsec.secrets", "tailscaled.state", "identity.secret",
	"openvpn/*.conf", "openvpn/*/*.conf", "openfortivpn/config", "vpnc/*.conf", "swanctl/swanctl.conf", "swanctl/conf.d/*.conf",
	// build tools' and package managers' credential files (sbt and Ivy,
	// Leiningen, Poetry, Hex, JFrog CLI, Helm, Nix, Gitea's tea)
	".sbt/.credentials", ".ivy2/.credentials", "credentials.clj", "credentials.clj.gpg", "pypoetry/auth.toml", "*hex/hex.config",
	".jfrog", "helm/registry/config.json", "helm/repositories.yaml", "nix/netrc", "nix/nix.conf", "tea/config.yml",
	".cabal/config", "cabal/config",
	// CLIs' tokens (Kubernetes config by other names, CircleCI, Travis,
	// Railway, Render, Supabase, Firebase and Snyk's configstore, Expo,
	// Twilio, Stripe, Sentry, Vultr, Scaleway, OVH, Hugging Face, Kaggle,
	// MinIO's mc, saml2aws)
	"kubeconfig", "*.kubeconfig", ".circleci/cli.yml", ".travis/config.yml", ".railway", ".render/cli.yaml",
	"*supabase/access-token", "configstore/firebase-tools.json", "configstore/snyk.json", "*expo/state.json", ".twilio-cli",
	"stripe/config.toml", ".sentryclirc", ".vultr-cli.yaml", "scw/config.yaml", "ovh.conf", "huggingface/token",
	"huggingface/stored_tokens", "kaggle.json", ".mc/config.json", ".saml2aws",
	// secret managers' and tunnel CLIs' state (1Password CLI, Bitwarden
	// CLI, Doppler, Infisical, LastPass, pass, cloudflared, ngrok, frp)
	"op/config", ".op", "bitwarden cli", ".doppler", ".infisical", ".lpass", "lpass", ".password-store",
	".cloudflared", "cloudflared", "ngrok.yml", "ngrok/ngrok.yml", ".ngrok2", "frpc.toml", "frpc.ini", ".zrok", ".awsvault",
	// browsers' and Electron apps' cookie stores under any profile name,
	// their journals; macOS keychains; Kerberos tickets and keytabs
	"profile */cookies", "guest profile/cookies", "cookies-journal", "login data-journal", "cookies.sqlite-*", "*.keychain-db", "keychains",
	"krb5cc_*", "*.keytab",
}

// ConfigFileName is moat's own per-folder configuration file; the model must
// never be able to rewrite the rules it runs under.
const ConfigFileName = ".moat.conf"

// Sentinel errors of the lexical path check. Messages shown to the model are
// built by [PathError].
var (
	ErrEscape   = errors.New("path escapes the sandbox")
	ErrAbsolute = errors.New("absolute paths are not allowed")
	ErrBadChar  = errors.New("path contains a NUL byte")
	ErrHome     = errors.New("home-relative paths are not allowed")
	ErrURL      = errors.New("URLs are not paths")
	ErrDenied   = errors.New("access denied")
)

// PathError is a refused path, named as the model gave it.
type PathError struct {
	Path string // as the model wrote it
	Err  error  // one of the sentinels above
	Rule string // the deny rule, for ErrDenied
	Hint string // how to fix it, when there is a useful one
}

func (e *PathError) Error() string {
	switch {
	case e.Err == ErrDenied:
		return fmt.Sprintf("%v: %s matches the deny rule %q", e.Err, e.Path, e.Rule)
	case e.Hint != "":
		return fmt.Sprintf("%v: %s (%s)", e.Err, e.Path, e.Hint)
	}
	return fmt.Sprintf("%v: %s", e.Err, e.Path)
}

func (e *PathError) Unwrap() error { return e.Err }

// Clean checks a path as the model wrote it and returns it cleaned, relative
// to the root, slash-separated, "." for the root itself. It never touches
// the file system: symlinks are the confined filesystem's business.
//
// A path argument is first read through [proto.PathName]: a name the
// tools showed quoted (it is not UTF-8, or could be mistaken for something
// else) is unquoted, and is checked as the name it stands for. A
// backslash is part of a name, as it is on Unix ("a\b.txt" is one file),
// but a path that would be absolute or leave the root were backslashes
// separators, as on Windows ("..\x", "\\server\share", "a/../..\x"),
// is refused on every system. "%2e%2e" is an ordinary (odd) file name
// here, since nothing URL-decodes paths.
func Clean(given string) (string, error) {
	p := proto.PathName(given)
	switch {
	case strings.IndexByte(p, 0) >= 0:
		return "", &PathError{Path: quoteNUL(given), Err: ErrBadChar}
	case strings.HasPrefix(p, "file:") || strings.Contains(p, "://"):
		return "", &PathError{Path: given, Err: ErrURL, Hint: "use a path relative to the workspace root"}
	case p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~\\"):
		return "", &PathError{Path: given, Err: ErrHome, Hint: "only the workspace is visible; use a path relative to its root"}
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "\\") || hasDrive(p):
		// No example path: stripping the slash names a path that need not
		// exist (root /home/me/proj, "/home/me/proj/x" is not "home/me/proj/x").
		// [Within] maps absolute paths inside the root before this.
		return "", &PathError{Path: given, Err: ErrAbsolute, Hint: "use a path relative to the workspace root"}
	}
	if strings.ContainsRune(p, '\\') {
		// Read as Windows reads it, with both separators: any ".." is
		// refused, so "..\x" and "a/../..\x" never escape there.
		for _, c := range strings.FieldsFunc(p, isSeparator) {
			if c == ".." {
				return "", &PathError{Path: given, Err: ErrEscape}
			}
		}
	}
	if p == "" {
		return ".", nil
	}
	c := path.Clean(p)
	switch {
	case c == ".." || strings.HasPrefix(c, "../"):
		return "", &PathError{Path: given, Err: ErrEscape}
	case strings.HasPrefix(c, `\`) || hasDrive(c): // "./\x", "./C:\x": absolute on Windows once cleaned
		return "", &PathError{Path: given, Err: ErrAbsolute, Hint: "use a path relative to the workspace root"}
	}
	return c, nil
}

// Within maps a path as a model sent it onto the workspace: models trained
// on other coding tools send absolute paths. An absolute path that lies
// lexically inside one of roots (the root's absolute path, and its
// symlink-resolved form, both absolute and clean) becomes root-relative
// ("." for the root itself), to be checked by [Clean] and confined as any
// other; ".." is resolved lexically first, so "/root/../etc" is outside.
// Any other absolute path is refused with the root named, never with a
// guessed path. Relative paths, and paths Clean refuses for another reason
// (NUL, backslashes, drives), are returned unchanged.
func Within(p string, roots ...string) (string, error) {
	if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 || len(roots) == 0 {
		return p, nil
	}
	c := path.Clean(p)
	for _, r := range roots {
		switch {
		case r == "/":
			if c == "/" {
				return ".", nil
			}
			return c[1:], nil
		case c == r:
			return ".", nil
		case strings.HasPrefix(c, r) && c[len(r)] == '/':
			return c[len(r)+1:], nil
		}
	}
	return "", &PathError{Path: p, Err: ErrAbsolute, Hint: fmt.Sprintf("it is outside the workspace, whose root is %s; use a path relative to the root", roots[0])}
}

func isSeparator(r rune) bool { return r == '/' || r == '\\' }

func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

func quoteNUL(p string) string { return strings.ReplaceAll(p, "\x00", `\x00`) }

// Policy is a compiled deny-list with its allow exceptions. The zero value
// is not usable; build one with [New]. It is read-only and safe for
// concurrent use.
type Policy struct {
	deny, allow, writeDeny ruleSet
	protected              []string // absolute paths never written (Protect)
}

// ruleSet is a list of patterns, sorted by how cheaply they match: exact
// names in a map, "prefix*" and "*suffix" by string tests, the rest by
// doublestar. The confined filesystem asks it about every path component
// the guest touches, so it is on grep's hot path.
type ruleSet struct {
	names    map[string]nameRules // by normalized name: the exact rule, the "/" rules ending in it
	exts     map[string]string    // "*.ext" rules by ".ext": one lookup for all of them
	prefixes [][2]string          // {prefix, rule}
	suffixes [][2]string          // {suffix, rule}, those exts cannot hold ("*_rsa")
	affixes  [][3]string          // {prefix, suffix, rule} for "P*S"
	contains [][2]string          // {infix, rule} for "*X*"
	globs    []string             // other base-name patterns
	paths    []pathRule           // patterns containing "/" whose last segment has a wildcard
	// first bytes of prefixes and last bytes of suffixes: a name whose
	// first (last) byte begins (ends) none of them skips that list
	preFirst, sufLast [256]bool
}

// nameRules are the rules a component of one name may match at once:
// the rule that is that name, and the "/" rules whose last segment it is.
type nameRules struct {
	rule  string
	paths []pathRule
}

// pathRule is a pattern with "/". One whose last segment has no wildcard
// can only match a component of that name, so the rest is tried only
// then; one with no wildcard at all is compared without doublestar.
type pathRule struct {
	pat, last string
	anyDepth  string // "**/" + pat, made once
	literal   bool
	// lastPre and lastSuf are the literal text before the first
	// wildcard of the last segment and after its last one: a name that
	// lacks either is not tried with doublestar ("*.conf" needs ".conf").
	lastPre, lastSuf string
}

func (rs *ruleSet) add(pat string) error {
	n := normalize(pat)
	if !doublestar.ValidatePattern(n) {
		return fmt.Errorf("policy: invalid pattern %q", pat)
	}
	if rs.names == nil {
		rs.names, rs.exts = map[string]nameRules{}, map[string]string{}
	}
	meta := func(s string) bool { return strings.ContainsAny(s, `*?[{\`) }
	star := strings.IndexByte(n, '*')
	switch {
	case strings.Contains(n, "/"):
		last := n[strings.LastIndexByte(n, '/')+1:]
		r := pathRule{pat: n, anyDepth: "**/" + n, literal: !meta(n)}
		if meta(last) {
			r.lastPre = last[:strings.IndexAny(last, `*?[{\`)]
			r.lastSuf = last[strings.LastIndexAny(last, `*?[]{}\`)+1:]
			rs.paths = append(rs.paths, r)
			break
		}
		r.last = last
		e := rs.names[last]
		e.paths = append(e.paths, r)
		rs.names[last] = e
	case !meta(n):
		e := rs.names[n]
		e.rule = n
		rs.names[n] = e
	case strings.HasPrefix(n, "*.") && !meta(n[1:]) && strings.Count(n, ".") == 1:
		if _, dup := rs.exts[n[1:]]; !dup {
			rs.exts[n[1:]] = n
		}
	case strings.HasSuffix(n, "*") && len(n) > 1 && !meta(n[:len(n)-1]):
		rs.prefixes = append(rs.prefixes, [2]string{n[:len(n)-1], n})
		rs.preFirst[n[0]] = true
	case strings.HasPrefix(n, "*") && len(n) > 1 && !meta(n[1:]):
		rs.suffixes = append(rs.suffixes, [2]string{n[1:], n})
		rs.sufLast[n[len(n)-1]] = true
	case len(n) > 2 && n[0] == '*' && n[len(n)-1] == '*' && !meta(n[1:len(n)-1]):
		rs.contains = append(rs.contains, [2]string{n[1 : len(n)-1], n})
	case star > 0 && !meta(n[:star]) && !meta(n[star+1:]):
		rs.affixes = append(rs.affixes, [3]string{n[:star], n[star+1:], n})
	default:
		rs.globs = append(rs.globs, n)
	}
	return nil
}

// match reports the rule matching one normalized component, given the
// normalized path up to and including it (for "/" rules).
func (rs *ruleSet) match(base string, full func() string) (string, bool) {
	named := rs.names[base] // one lookup for both kinds
	if named.rule != "" {
		return named.rule, true
	}
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		if r, ok := rs.exts[base[i:]]; ok {
			return r, true
		}
	}
	if base != "" && rs.preFirst[base[0]] {
		for _, p := range rs.prefixes {
			if strings.HasPrefix(base, p[0]) {
				return p[1], true
			}
		}
	}
	if base != "" && rs.sufLast[base[len(base)-1]] {
		for _, p := range rs.suffixes {
			if strings.HasSuffix(base, p[0]) {
				return p[1], true
			}
		}
	}
	for _, p := range rs.affixes {
		if len(base) >= len(p[0])+len(p[1]) && strings.HasPrefix(base, p[0]) && strings.HasSuffix(base, p[1]) {
			return p[2], true
		}
	}
	for _, p := range rs.contains {
		if strings.Contains(base, p[0]) {
			return p[1], true
		}
	}
	// Every pattern was validated when added: not again for each name.
	for _, g := range rs.globs {
		if doublestar.MatchUnvalidated(g, base) {
			return g, true
		}
	}
	var f string
	for _, list := range [2][]pathRule{named.paths, rs.paths} {
		for _, r := range list {
			if f == "" {
				f = full()
			}
			if r.literal {
				// The rule is the whole path or its tail after a "/".
				if f == r.pat || len(f) > len(r.pat) && f[len(f)-len(r.pat)-1] == '/' && strings.HasSuffix(f, r.pat) {
					return r.pat, true
				}
				continue
			}
			if len(base) < len(r.lastPre)+len(r.lastSuf) || !strings.HasPrefix(base, r.lastPre) || !strings.HasSuffix(base, r.lastSuf) {
				continue // its last segment cannot match base
			}
			if doublestar.MatchUnvalidated(r.pat, f) || doublestar.MatchUnvalidated(r.anyDepth, f) {
				return r.pat, true
			}
		}
	}
	return "", false
}

// New builds a policy from the built-in deny-list plus extra deny and allow
// patterns (the --deny and --allow flags). Patterns are globs in
// doublestar syntax; one without "/" matches a base name at any depth.
func New(deny, allow []string) (*Policy, error) {
	p := &Policy{}
	for _, l := range []struct {
		dst  *ruleSet
		pats []string
	}{{&p.deny, defaultDeny}, {&p.deny, deny}, {&p.allow, allow}, {&p.writeDeny, neverWritten()}} {
		for _, pat := range l.pats {
			if err := l.dst.add(pat); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// normalize folds a name or pattern the way case-insensitive file systems
// do, and drops the trailing dots and spaces Windows ignores.
func normalize(s string) string {
	if isNormal(s) {
		return s // the common case, checked on every open: no allocation
	}
	if !strings.Contains(s, "/") {
		return normalizeName(s)
	}
	parts := strings.Split(s, "/")
	for i, c := range parts {
		parts[i] = normalizeName(c)
	}
	return strings.Join(parts, "/")
}

// isNormal reports whether normalize would return s unchanged: ASCII
// without upper-case letters, and no component ending in a dot or a space
// other than "." and "..".
func isNormal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
		if (c == '.' || c == ' ') && (i+1 == len(s) || s[i+1] == '/') {
			comp := s[strings.LastIndexByte(s[:i], '/')+1 : i+1]
			if comp != "." && comp != ".." {
				return false
			}
		}
	}
	return true
}

func normalizeName(c string) string {
	if c == "." || c == ".." {
		return c
	}
	if !isASCII(c) {
		c = fold(c)
	}
	t := strings.TrimRight(c, ". ")
	if t == "" {
		t = c // a name made only of dots/spaces stays itself
	}
	return strings.ToLower(t)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// fold is Unicode's canonical caseless match key (NFD, full case folding,
// NFD again; Unicode 16 §3.13 D145), composed back to NFC, without the
// format characters (zero-width joiners, direction marks, BOM) that HFS+
// skips when it compares names. Two names with the same key may be one
// file on APFS, HFS+ or NTFS: ".awſ" (U+017F, long s) folds to ".aws",
// and a decomposed "é" as macOS stores it equals the composed one. Full
// folding also merges what those file systems keep apart (ß and ss), which
// errs towards denying. A Caser holds state, so each call makes its own.
func fold(s string) string {
	s = norm.NFC.String(cases.Fold().String(norm.NFD.String(s)))
	if strings.IndexFunc(s, isFormat) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isFormat(r) {
			return -1
		}
		return r
	}, s)
}

func isFormat(r rune) bool { return unicode.Is(unicode.Cf, r) }

// Denied reports whether rel (cleaned, root-relative, slash-separated) or any
// folder above it is on the deny-list, and which rule matched.
func (p *Policy) Denied(rel string) (rule string, denied bool) {
	return p.denied(rel)
}

// denied is Denied: rel as it is, then as the names its components stand
// for when they are stored or copied forms (see storedForm).
func (p *Policy) denied(rel string) (string, bool) {
	n := normalize(rel)
	if r, ok := p.walkNormal(n, &p.deny); ok {
		return r, true
	}
	if s, ok := stored(n); ok {
		return p.walkStored(n, s)
	}
	return "", false
}

// walkStored is walkNormal on s, the stored-form reading of n (component
// for component), where an --allow pattern matching the component as
// written also opens it: --allow id_rsa.bak opens that copy, not id_rsa.
func (p *Policy) walkStored(n, s string) (string, bool) {
	raw, dec := strings.Split(n, "/"), strings.Split(s, "/")
	if len(raw) != len(dec) {
		return p.walkNormal(s, &p.deny)
	}
	for i := range dec {
		decUpTo, rawUpTo := strings.Join(dec[:i+1], "/"), strings.Join(raw[:i+1], "/")
		r, ok := p.deny.match(dec[i], func() string { return decUpTo })
		if ok && !p.allowed(dec[i], func() string { return decUpTo }) && !p.allowed(raw[i], func() string { return rawUpTo }) {
			return r, true
		}
	}
	return "", false
}

// DeniedChild reports whether name, an entry of the folder parent (a path
// already known not to be denied), is denied. It is Denied for one more
// component, without re-checking the folders above.
func (p *Policy) DeniedChild(parent, name string) (rule string, denied bool) {
	n := name
	if !isNormal(name) || strings.IndexByte(name, '/') >= 0 {
		n = normalizeName(name) // the common name, lower-case ASCII, is its own form
	}
	full := func() string {
		if parent == "." || parent == "" {
			return n
		}
		return normalize(parent) + "/" + n
	}
	if r, ok := p.deny.match(n, full); ok && !p.allowed(n, full) {
		return r, true
	}
	if _, _, ok := storedForm(n); ok { // rare: the folders above are known not to be denied
		if parent == "." || parent == "" {
			return p.denied(name)
		}
		return p.denied(parent + "/" + name)
	}
	return "", false
}

// WriteDenied is [Policy.Denied] plus the files that configure tools, which
// may be read but never written by a proposal.
func (p *Policy) WriteDenied(rel string) (rule string, denied bool) {
	if r, ok := p.denied(rel); ok {
		return r, true
	}
	return p.walk(rel, &p.writeDeny)
}

func (p *Policy) walk(rel string, rules *ruleSet) (string, bool) {
	return p.walkNormal(normalize(rel), rules)
}

// walkNormal is walk for a path already normalized.
func (p *Policy) walkNormal(n string, rules *ruleSet) (string, bool) {
	if n == "." || n == "" {
		return "", false
	}
	for start := 0; start <= len(n); {
		end := strings.IndexByte(n[start:], '/')
		if end < 0 {
			end = len(n)
		} else {
			end += start
		}
		c, upTo := n[start:end], n[:end]
		full := func() string { return upTo }
		if r, ok := rules.match(c, full); ok && !p.allowed(c, full) {
			return r, true
		}
		start = end + 1
	}
	return "", false
}

// neverWritten is the never-write list: the files of the codeFiles table
// that a tool runs without anyone deciding to (see codeFile).
func neverWritten() []string {
	var out []string
	for _, r := range codeFiles {
		if r.never {
			out = append(out, r.pattern)
		}
	}
	return out
}

func (p *Policy) allowed(base string, full func() string) bool {
	_, ok := p.allow.match(base, full)
	return ok
}

// Protect adds folders and files that no proposal may write, named by
// absolute path: what configures moat itself (its config file wherever it
// would read one, its state, session and cache folders, the audit log),
// and everything under them, wherever the root is. Each is kept as given
// and, when it or a folder above it exists, as the path with symbolic
// links resolved, so a root reached through a link finds it too. Call it
// before the policy is shared.
func (p *Policy) Protect(paths ...string) {
	for _, a := range paths {
		if a == "" || !filepath.IsAbs(a) {
			continue
		}
		a = filepath.Clean(a)
		p.protected = append(p.protected, a)
		if r := resolveExisting(a); r != a {
			p.protected = append(p.protected, r)
		}
	}
}

// resolveExisting is a with its longest existing prefix's symbolic links
// resolved, and the rest as it is.
func resolveExisting(a string) string {
	rest := ""
	for d := a; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(d) == d {
			return a
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// Protected reports the protected path (see [Policy.Protect]) that abs,
// an absolute path, is or lies under. Names are compared without regard
// to case, as on a case-insensitive file system, which errs towards
// refusing.
func (p *Policy) Protected(abs string) (string, bool) {
	abs = filepath.Clean(abs)
	for _, d := range p.protected {
		if len(abs) < len(d) || !strings.EqualFold(abs[:len(d)], d) {
			continue
		}
		if len(abs) == len(d) || abs[len(d)] == filepath.Separator || d == string(filepath.Separator) {
			return d, true
		}
	}
	return "", false
}
