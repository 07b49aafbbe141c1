package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestDenied(t *testing.T) {
	p, err := New([]string{"*.sqlite"}, []string{".env.example"})
	if err != nil {
		t.Fatal(err)
	}
	deny := []string{".env", ".ENV", ".env.local", ".env.", ".env ", "a/.env", ".git", ".git/config", "x/.git/hooks/pre-commit",
		"id_rsa", "keys/server.KEY", "cert.pem", ".netrc", ".npmrc", ".pgpass", "db.sqlite", ".ssh/config", ".Env...  "}
	allow := []string{".", "environment.md", "env", "notes.txt", ".env.example", "src/.gitignore", "id_rsa.pub", ".github/workflows/ci.yml", "a/.envrc"}
	for _, d := range deny {
		if _, ok := p.Denied(d); !ok {
			t.Errorf("Denied(%q) = false, want true", d)
		}
	}
	for _, a := range allow {
		if r, ok := p.Denied(a); ok {
			t.Errorf("Denied(%q) = true (rule %q), want false", a, r)
		}
	}
	for _, w := range []string{".vscode/settings.json", ".mcp.json", ".moat.conf", "sub/.vscode/settings.json", ".git/hooks/x", ".envrc"} {
		if _, ok := p.WriteDenied(w); !ok {
			t.Errorf("WriteDenied(%q) = false", w)
		}
	}
}

func TestClean(t *testing.T) {
	ok := map[string]string{"": ".", ".": ".", "a/./b/": "a/b", "a/../b": "b", "%2e%2e/x": "%2e%2e/x", "a..b": "a..b"}
	for in, want := range ok {
		if got, err := Clean(in); err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]error{"..": ErrEscape, "../x": ErrEscape, "a/../../x": ErrEscape, "../root-evil/x": ErrEscape,
		"/etc/passwd": ErrAbsolute, `C:\x`: ErrAbsolute, `\\server\x`: ErrAbsolute, `..\x`: ErrEscape, "a\x00b": ErrBadChar,
		"~": ErrHome, "~/.bashrc": ErrHome, "file:///etc/passwd": ErrURL}
	for in, want := range bad {
		if _, err := Clean(in); !errors.Is(err, want) {
			t.Errorf("Clean(%q) err = %v, want %v", in, err, want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"a", "../a", "a/../../b", "/x", "..\\x", "~/x", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Clean(s)
		if err != nil {
			return
		}
		if c == ".." || len(c) >= 3 && c[:3] == "../" || len(c) > 0 && c[0] == '/' {
			t.Fatalf("Clean(%q) = %q escapes", s, c)
		}
	})
}

// FuzzNormalize holds normalize's no-allocation shortcut to the plain
// definition: fold every component.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"a/b", "A/b", "a./b", "a /b", "./..", "...", "a/../b", "É/x", ".env.", "src/.Git/config", "a//b", "a/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts := strings.Split(s, "/")
		for i, c := range parts {
			parts[i] = normalizeName(c)
		}
		if got, want := normalize(s), strings.Join(parts, "/"); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", s, got, want)
		}
	})
}
