package policy

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitConfigRandomAgainstGit holds the port to git on inputs built at
// random from the pieces that matter (headers in every spelling, quotes,
// escapes, continuations, comments, CRLF, a BOM): wherever git reads the
// file, the port reads the same keys. (Where git rejects it, git runs
// nothing from it.)
func TestGitConfigRandomAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	parts := []string{"[core]", "[CORE]", "[filter \"a\"]", "[a.B]", "[alias]", " ", "\t", "\n", "\r\n", "fsmonitor", "=", " = ", "x", "\"", "\\", "\\\n", ";", "#", "pager", "[", "]", "a-b", "1", "!sh", "[x \"y\\\"z\"]", "\ufeff", "[include]", "path", "[sub.\"q\"]", "\"quoted # x\"", "=\"a\\\"b\"", "\\t", "\\n", "\\z", "b\\\n[core]"}
	r := rand.New(rand.NewSource(7))
	dir := t.TempDir()
	bad := 0
	for n := 0; n < 500; n++ {
		var b strings.Builder
		for k := r.Intn(12) + 1; k > 0; k-- {
			b.WriteString(parts[r.Intn(len(parts))])
		}
		in := b.String()
		f := filepath.Join(dir, "c")
		os.WriteFile(f, []byte(in), 0o644)
		cmd := exec.Command("git", "config", "--file", f, "--list", "--name-only")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.Output()
		var got []string
		p := gitConfigParser{s: strings.TrimPrefix(in, "\ufeff")}
		p.parse(func(name, _ string, _ bool) bool { got = append(got, name); return true })
		if err != nil {
			continue
		}
		want := strings.Fields(strings.ToLower(string(out)))
		if strings.Join(got, " ") != strings.Join(want, " ") {
			bad++
			if bad < 8 {
				t.Errorf("%q: port %v, git %v", in, got, want)
			}
		}
	}
}
