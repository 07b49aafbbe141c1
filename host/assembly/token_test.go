package assembly

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TokenFile creates a missing token file with a fresh token, private to
// its owner, reads it back the next time, and refuses every other case
// with one line naming the flag.
func TestTokenFile(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "token")
	tok, created, err := TokenFile(path, "--token-file", root)
	if err != nil || !created || len(tok) != 64 {
		t.Fatalf("a missing file: %q, created %v, %v", tok, created, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the new file: %v, %v", st.Mode(), err)
	}
	again, created, err := TokenFile(path, "--token-file", root)
	if err != nil || created || again != tok {
		t.Fatalf("read again: %q, created %v, %v; want %q", again, created, err, tok)
	}
	other, _, err := TokenFile(filepath.Join(dir, "token2"), "--token-file", root)
	if err != nil || other == tok {
		t.Fatalf("a second new token %q is the first, or %v", other, err)
	}
	for name, tc := range map[string]struct {
		path string
		want string
	}{
		"missing folder":  {filepath.Join(dir, "no", "token"), "--token-file " + filepath.Join(dir, "no", "token") + ": no such folder"},
		"folder":          {dir, "is a folder"},
		"inside the root": {filepath.Join(root, "sub", "token"), "is inside the root"},
		"MOAT_TOKEN_FILE": {filepath.Join(dir, "nope", "t"), `MOAT_TOKEN_FILE="`},
	} {
		from := "--token-file"
		if name == "MOAT_TOKEN_FILE" {
			from = name
		}
		_, _, err := TokenFile(tc.path, from, root)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "sub", "token")); err == nil {
		t.Errorf("a token file was made inside the root")
	}
}

// With several roots the token file must be outside every one of them.
func TestTokenFileSeveralRoots(t *testing.T) {
	dir, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	_, _, err := TokenFile(filepath.Join(b, "token"), "--token-file", a, b)
	if err == nil || !strings.Contains(err.Error(), "is inside the root "+b) {
		t.Errorf("a token file in the second root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b, "token")); err == nil {
		t.Errorf("a token file was made inside the second root")
	}
	if _, created, err := TokenFile(filepath.Join(dir, "token"), "--token-file", a, b); err != nil || !created {
		t.Errorf("a token file outside both: created %v, %v", created, err)
	}
}

// A token file others can read, or that holds no usable token, is a Usage
// error; a missing folder a Failure.
func TestTokenFileRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, tc := range map[string]struct {
		path string
		kind Kind
		want string
	}{
		"others can read": {write("open", "0123456789abcdef0123\n", 0o644), Usage, "can be read or written by other users (mode 0644)"},
		"short":           {write("short", "abc\n", 0o600), Usage, "at least 16 characters"},
		"two words":       {write("words", "0123456789 abcdef0123\n", 0o600), Usage, "one word of printable ASCII"},
		"too long":        {write("long", strings.Repeat("a", maxTokenFileBytes+1), 0o600), Usage, "more than 4096 bytes"},
		"no folder":       {filepath.Join(dir, "none", "t"), Failure, "no such folder"},
	} {
		_, _, err := TokenFile(tc.path, "--token-file")
		var ae *Error
		if !errors.As(err, &ae) || ae.Kind != tc.kind || !strings.Contains(ae.Msg, tc.want) {
			t.Errorf("%s: %v, want a kind %d error with %q", name, err, tc.kind, tc.want)
		}
	}
	if tok, _, err := TokenFile(write("good", " 0123456789abcdef0123 \n", 0o600), "--token-file"); err != nil || tok != "0123456789abcdef0123" {
		t.Errorf("a good file: %q, %v", tok, err)
	}
}
