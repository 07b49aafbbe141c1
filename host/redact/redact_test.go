package redact

import (
	"strings"
	"testing"
)

// Test tokens are assembled at run time so that no secret scanner takes
// this file for a leak.
func tok(parts ...string) string { return strings.Join(parts, "") }

var (
	ghToken  = tok("ghp_", "R8fQ2mZx7LwK1pVt9sNb3cYh5JdUe6Ga4Xo0")
	awsKey   = tok("AKIA", "Z7Q3KX4LMN2PRT5W")
	slackBot = tok("xoxb-", "263594206564-2343594206564-", "FGqddMF8t08v8N7Oq4i57vs1")
	pemBlock = tok("-----BEGIN RSA ", "PRIVATE KEY-----\n",
		"MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8rN5oH1fQmYxLk2JdV7wE0sR4\n",
		"qB6gT8yZ1cH5nKj3LmP9vX2wA7uE4rF0iD6sG3hJ8kL1mN5oP2qR9tU4vW7xY0zB\n",
		"-----END RSA ", "PRIVATE KEY-----")
)

func TestRedact(t *testing.T) {
	r := New()
	cases := []struct{ in, want string }{
		{"token: " + ghToken + "\n", "token: [redacted: github-pat]\n"},
		{"aws_access_key_id = " + awsKey + "\n", "aws_access_key_id = [redacted: aws-access-token]\n"},
		{"SLACK=" + slackBot + "\n", "SLACK=[redacted: slack-bot-token]\n"},
		{"a\n" + pemBlock + "\nb\n", "a\n[redacted: private-key]\nb\n"},
		{"x.go:3: key := \"" + ghToken + "\"\n", "x.go:3: key := \"[redacted: github-pat]\"\n"},
	}
	for _, c := range cases {
		got, n := r.Redact(c.in)
		if got != c.want || n != 1 {
			t.Errorf("Redact(%q) = %q, %d; want %q", c.in, got, n, c.want)
		}
	}
	for _, plain := range []string{"", "package main\n\nfunc main() { token := lexer.NextToken() }\n",
		"api_key = os.Getenv(\"API_KEY\")\n", "ghp_ is GitHub's prefix\n", "AKIAIOSFODNN7EXAMPLE\n"} {
		if got, n := r.Redact(plain); got != plain || n != 0 {
			t.Errorf("Redact(%q) = %q, %d; want it unchanged", plain, got, n)
		}
	}
}

// TestStartsAtKeyword: the shortcut applies to fixed-prefix token rules
// only, and a token after a word character is still found when the rule
// does not begin with a word boundary.
func TestStartsAtKeyword(t *testing.T) {
	r := New()
	n := 0
	for _, ru := range r.rules {
		if startsAtKeyword(ru.regex, ru.keywords) {
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d rules take the word-boundary shortcut", n)
	}
	for expr, want := range map[string]bool{
		`\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:$)`: true,
		`\b(ghp_[0-9a-zA-Z]{36})`:                              true,
		`(?i)[\w.-]{0,50}?(?:yandex)(?:[ \t\w.-]{0,20})`:       false,
		`\b([a-z]{3}_x)`: false,
	} {
		if got := startsAtKeyword(expr, []string{"hvs.", "s.", "ghp_", "yandex"}); got != want {
			t.Errorf("startsAtKeyword(%q) = %v, want %v", expr, got, want)
		}
	}
	// "xghp_..." has no word boundary before the token: not a GitHub token
	// to gitleaks either; "(ghp_..." has one.
	if _, n := r.Redact("(" + ghToken + ")"); n != 1 {
		t.Errorf("token after a parenthesis not redacted")
	}
}

// TestShortcutsAgree: the windows and the word-boundary shortcut find
// exactly what each rule's regex finds over the whole text.
func TestShortcutsAgree(t *testing.T) {
	text := sample(16<<10) + "\nx" + ghToken + " (" + ghToken + ")\nos.s." + "Ab3dEf5hIj7lMn9pQr1tUv3x" + " s." + "Ab3dEf5hIj7lMn9pQr1tUv3x\n" +
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n" + pemBlock + "\n" + awsKey + "\n"
	r := New()
	got := r.Find(text)
	var want []Finding
	for _, ru := range r.rules {
		ru.compile()
		want = ru.scan(r, text, 0, len(text), want)
	}
	want = dedupe(want)
	if len(got) != len(want) {
		t.Fatalf("windows found %d, whole text %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("finding %d: %v, whole text %v", i, got[i], want[i])
		}
	}
	if len(got) < 5 {
		t.Errorf("only %d findings: %v", len(got), got)
	}
}

// TestDigest: the digest is the same for the same rules, and changes
// with any rule's data and with the global allowlist.
func TestDigest(t *testing.T) {
	base := func() ([]ruleData, allowData) { return append(gitleaksRules(), configRules()...), globalAllow() }
	rules, global := base()
	want := New().Digest()
	if got := newRedactor(rules, global).Digest(); got != want {
		t.Fatal("the same rules, another digest")
	}
	for name, change := range map[string]func(r []ruleData, g *allowData){
		"a regex":         func(r []ruleData, g *allowData) { r[3].regex += "x" },
		"a keyword":       func(r []ruleData, g *allowData) { r[3].keywords = append(r[3].keywords, "x") },
		"an entropy":      func(r []ruleData, g *allowData) { r[3].entropy += 0.5 },
		"a rule left out": func(r []ruleData, g *allowData) { r[len(r)-1] = r[0] },
		"a stopword":      func(r []ruleData, g *allowData) { g.stopwords = append(g.stopwords, "x") },
	} {
		r, g := base()
		r = append([]ruleData(nil), r...)
		r[3].keywords = append([]string(nil), r[3].keywords...)
		change(r, &g)
		if newRedactor(r, g).Digest() == want {
			t.Errorf("%s changed, the digest did not", name)
		}
	}
}
