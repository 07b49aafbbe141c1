package redact

// moat's own rules, as data in the form of rules_gen.go's: secrets of no
// fixed shape, which gitleaks leaves to its generic-api-key heuristic (left
// out: it matches ordinary code). They are written for configuration, not
// code, and the "config" ones run only on a file that is
// configuration-shaped (ConfigShaped); the others run on every text, as
// gitleaks' rules do.

// secretKeyWords are the words a key's name ends with when its value is a
// secret: "db_password", "DB_PASSWORD", "dbPassword", "client_secret",
// "PrivateKey", "aws_secret_access_key", "auth_token", "_auth". A name that
// only contains one ("tokenizer", "author", "keyboard") is not one: the
// word must end the name, a number after it aside ("password2").
const secretKeyWords = `(?:password|passwd|passphrase|secret|token|auth|authorization|credentials?|private[_.-]?key|privatekey|preshared[_.-]?key|presharedkey|api[_.-]?key|apikey|access[_.-]?key|accesskey|secret[_.-]?key|client[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|session[_.-]?key)`

// configValue is the value of an assignment: a quoted string (JSON, TOML,
// YAML, an .env file's quotes; whatever follows it), or a bare value up
// to the end of the line, without a trailing comma (JSON, a YAML flow map)
// or a comment after a blank (" # ...", " ; "). The secret is the value
// without its quotes.
const configValue = `(?:"((?:[^"\\\r\n]|\\.)+)"|'([^'\r\n]+)'|([^\s"'#;,{}\[\]][^\r\n]*?)[ \t]*,?[ \t]*(?:[ \t][#;][^\r\n]*)?\r?$)`

// configRules are moat's rules. A rule whose id begins "moat-config-" runs
// only on configuration-shaped files, "moat-netrc-" only on netrc-shaped
// ones (ConfigShaped); the others on every text.
func configRules() []ruleData {
	return []ruleData{
		// key = value (ini, toml, properties, .env, wireguard), key: value
		// (yaml), "key": "value" (json), key => value: at the start of a
		// line or after "{", "," or ";" (minified JSON), the key's name
		// optionally quoted or after "export ".
		{id: "moat-config-secret", regex: `(?im)(?:^|[{,;])[ \t]*(?:export[ \t]+)?["']?[\w.-]*?` + secretKeyWords + `\d*["']?[ \t]*(?:=|:=|:|=>)[ \t]*` + configValue,
			keywords: []string{"pass", "secret", "token", "auth", "credential", "key"}},
		// netrc and .authinfo: "machine host login me password secret",
		// the words apart by blanks, on one line or many.
		{id: "moat-netrc-password", regex: `(?i)(?:^|\s)(?:password|passwd|passphrase)[ \t]+(\S+)`,
			keywords: []string{"pass"}},
		// A PEM block in base64 (a kubeconfig's client-key-data, a Helm
		// value, a CI variable): "-----BEGIN" encoded is "LS0tLS1CRUdJTi".
		// Certificates and public keys are not secrets and are let
		// through by their encoded headers.
		{id: "moat-base64-pem", regex: `\b(LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2})`,
			keywords: []string{"ls0tls1crudjti"},
			allow: []allowData{{regexes: []string{
				`^LS0tLS1CRUdJTiBDRVJUSUZJQ0FUR`, // -----BEGIN CERTIFICATE
				`^LS0tLS1CRUdJTiBQVUJMSUMgS0VZ`,  // -----BEGIN PUBLIC KEY
				`^LS0tLS1CRUdJTiBSU0EgUFVCTElD`,  // -----BEGIN RSA PUBLIC
				`^LS0tLS1CRUdJTiBYNTA5IENSTC0t`,  // -----BEGIN X509 CRL--
			}}}},
	}
}
