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
