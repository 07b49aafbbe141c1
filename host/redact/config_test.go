package redact

import (
	"strings"
	"testing"
)

// TestConfigRules: a value assigned to a key whose name says it is secret
// is found in every configuration format, and nowhere in source code.
func TestConfigRules(t *testing.T) {
	r := New()
	pw := tok("hunter", "2-Zq8x")
	pem := tok("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF", "cEFJQkFBS0NBUUVBM1R6Mm1yN1NaaUFNZlF5dUJ2ak05T2k4")
	cases := []struct{ name, text, secret, rule string }{
		{"app.ini", "[db]\nhost = x\npassword = " + pw + "\n", pw, "moat-config-secret"},
		{"app.ini", "[db]\npassword = " + pw + " ; the admin's\n", pw, "moat-config-secret"},
		{"Cargo.toml", "[registry]\ntoken = \"" + pw + "\"\n", pw, "moat-config-secret"},
		{"values.yaml", "db:\n  user: app\n  dbPassword: " + pw + "\n", pw, "moat-config-secret"},
		{"values.yml", "auth:\n  client_secret: '" + pw + "'\n", pw, "moat-config-secret"},
		{"sa.json", "{\n  \"type\": \"x\",\n  \"api_key\": \"" + pw + "\",\n  \"n\": 1\n}\n", pw, "moat-config-secret"},
		{"min.json", `{"user":"a","password":"` + pw + `","n":1}`, pw, "moat-config-secret"},
		{"prod.env", "export DB_PASSWORD=" + pw + "\n", pw, "moat-config-secret"},
		{".env.local", "STRIPE_SECRET=\"" + pw + "\"\n", pw, "moat-config-secret"},
		{"credentials", "[default]\naws_access_key_id = x\naws_secret_access_key = " + pw + "\n", pw, "moat-config-secret"},
		{"wg0.conf", "[Interface]\nPrivateKey = " + pw + "\nAddress = 10.0.0.1/24\n", pw, "moat-config-secret"},
		{"db.properties", "db.url=jdbc:x\ndb.password=" + pw + "\n", pw, "moat-config-secret"},
		{".netrc", "machine example.com login me password " + pw + "\n", pw, "moat-netrc-password"},
		{"netrc", "machine example.com\n  login me\n  password " + pw + "\n", pw, "moat-netrc-password"},
		{"kubeconfig", "users:\n- name: u\n  user:\n    client-key-data: " + pem + "\n", pem, "moat-base64-pem"},
		{"notes", "host: db\npassword: " + pw + "\n", pw, "moat-config-secret"}, // no extension: by its shape
	}
	for _, c := range cases {
		fs := r.FindFile(c.name, []byte(c.text))
		if len(fs) != 1 || c.text[fs[0].Start:fs[0].End] != c.secret || fs[0].Rule != c.rule {
			t.Errorf("%s %q: found %v, want %q by %s", c.name, c.text, fs, c.secret, c.rule)
		}
	}
	plain := []struct{ name, text string }{
		{"main.go", "package main\n\nfunc f() {\n\tpassword := \"" + pw + "\"\n\t_ = password\n}\n"},
		{"settings.py", "PASSWORD = \"" + pw + "\"\n"},
		{"config.go", "token = \"" + pw + "\"\n"},
		{"notes.txt", "Remember to change the password: " + pw + " is what it was\nand more prose.\n"},
		{"app.yaml", "author: " + pw + "\ntokenizer: " + pw + "\nkeyboard: " + pw + "\n"},
		{"app.yaml", "password: ${DB_PASSWORD}\ntoken: \"\"\nsecret:\n  name: x\n"},
		{"app.ini", "; set the password below\npassword_file = /etc/app/pw\n"},
		{"kubeconfig", "    client-certificate-data: " + tok("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t", "Ck1JSUMvekNDQWVlZ0F3SUJBZ0lCQURBTkJna3Fo") + "\n"},
	}
	for _, p := range plain {
		if fs := r.FindFile(p.name, []byte(p.text)); len(fs) != 0 {
			t.Errorf("%s %q: found %v, want nothing", p.name, p.text, fs)
		}
	}
	// The configuration rules need the file: an answer alone is not one.
	if fs := r.Find("password = " + pw + "\n"); len(fs) != 0 {
		t.Errorf("Find ran a configuration rule: %v", fs)
	}
}

// TestShapeOf: the name decides, then the content.
func TestShapeOf(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       Shape
	}{
		{"a/b/.netrc", "", Netrc | Config},
		{"x.YAML", "", Config},
		{".env.production", "", Config},
		{"main.go", "a = b\n", 0},
		{"notes.txt", "# comment\n[s]\nkey = v\nlist:\n  - a\n", Config},
		{"notes.txt", "Dear reader: here is prose.\n", 0},
		{"README", "key = v\nand then prose\n", 0},
		{"empty", "", 0},
	} {
		if got := ShapeOf(c.name, []byte(c.head)); got != c.want {
			t.Errorf("ShapeOf(%q, %q) = %v, want %v", c.name, c.head, got, c.want)
		}
	}
}

// TestFindReaderAt: a file read in pieces has the same findings as read
// whole, a secret across a piece's edge included, and a key block deep in
// one long line (a service account's JSON) is found.
func TestFindReaderAt(t *testing.T) {
	r := New()
	var b strings.Builder
	for b.Len() < findChunk-40 {
		b.WriteString("an ordinary line of a log, nothing secret in it at all\n")
	}
	b.WriteString("token " + ghToken + "\n") // across the first piece's end
	long := strings.Repeat(`"x": "abcdefghij", `, 10000)
	b.WriteString(`{` + long + `"private_key": "` + strings.ReplaceAll(pemBlock, "\n", `\n`) + `", "y": 1}` + "\n")
	for b.Len() < 3*findChunk {
		b.WriteString("more log " + awsKey + "\n")
	}
	text := b.String()
	whole := r.FindFile("log.txt", []byte(text))
	got, err := r.FindReaderAt("log.txt", strings.NewReader(text), int64(len(text)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(whole) || len(got) < 3 {
		t.Fatalf("in pieces %d findings, whole %d", len(got), len(whole))
	}
	for i := range got {
		if got[i] != whole[i] {
			t.Errorf("finding %d: in pieces %v, whole %v", i, got[i], whole[i])
		}
	}
	if got[0].Rule != "github-pat" || text[got[0].Start:got[0].End] != ghToken {
		t.Errorf("token across the edge: %v", got[0])
	}
	if got[1].Rule != "private-key" {
		t.Errorf("key block in a long line: %v", got[1])
	}
}

// TestScannerBound: a file made of secrets has at most MaxScanFindings
// findings, the last hiding the rest of the file.
func TestScannerBound(t *testing.T) {
	line := "k " + awsKey + "\n"
	text := strings.Repeat(line, MaxScanFindings+10)
	fs, err := New().FindReaderAt("keys.txt", strings.NewReader(text), int64(len(text)))
	if err != nil {
		t.Fatal(err)
	}
	last := fs[len(fs)-1]
	if len(fs) != MaxScanFindings || last.Rule != TooMany || last.End != len(text) || last.Start != (MaxScanFindings-1)*len(line)+2 {
		t.Errorf("%d findings, the last %+v", len(fs), last)
	}
}
