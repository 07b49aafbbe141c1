package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/moatdev/moat/host/redact"
)

// Issue 18's checks on what a proposal may be: its size before it is
// built, git's internals under any name, and the file's secrets in the
// diff.

// TestEditTooLargeAllocatesNothing is issue 18.1's attack, scaled down: a
// file of newlines, each replaced by a KiB. Before the bound the gate built
// the whole 100 MB result (and through moat mcp, at full scale, ran out of
// memory); now it is refused, in the words of any oversized proposal,
// having allocated about what the file and the arguments hold.
func TestEditTooLargeAllocatesNothing(t *testing.T) {
	f := newFixture(t, "y\n")
	const lines = 100_000
	f.write("nl.txt", strings.Repeat("\n", lines))
	raw, err := json.Marshal(map[string]any{"path": "nl.txt", "old_text": "\n", "new_text": strings.Repeat("x", 1<<10), "replace_all": true})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := f.gate.Propose(context.Background(), "propose_edit", raw)
	runtime.ReadMemStats(&after)
	if want := fmt.Sprintf("refused: nl.txt is too large: the new content is %d bytes, more than the %d", lines<<10, MaxFileBytes); !res.IsError || !strings.HasPrefix(res.Text, want) {
		t.Errorf("result %+v, want %q", res, want)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("the refused edit allocated %d bytes; the result it refused is %d", got, lines<<10)
	}
	if f.opens != 0 {
		t.Error("prompt shown for an oversized edit")
	}
}

// TestEditSize: the bound is exact at the limit and saturates instead of
// overflowing.
func TestEditSize(t *testing.T) {
	// million is a million-byte file after a million one-byte matches
	// become new bytes each, or math.MaxInt where an int (32 bits on
	// linux/386) does not hold that.
	million := func(new int64) int {
		if s := 1_000_000 + 1_000_000*(new-1); s <= math.MaxInt {
			return int(s)
		}
		return math.MaxInt
	}
	cases := []struct {
		size, n, old, new, want int
		ok                      bool
	}{
		{10, 2, 1, 3, 14, true},
		{10, 2, 3, 1, 6, true},
		{MaxFileBytes - 2, 2, 1, 2, MaxFileBytes, true},
		{MaxFileBytes - 2, 3, 1, 2, MaxFileBytes + 1, false},
		{1_000_000, 1_000_000, 1, 1 << 20, million(1 << 20), false},
		{1, math.MaxInt/2 + 1, 0, math.MaxInt/2 + 1, math.MaxInt, false}, // past 64 bits (or 32)
		{1 << 20, 1, 0, math.MaxInt, math.MaxInt, false},
	}
	for _, c := range cases {
		got, ok := EditSize(c.size, c.n, c.old, c.new)
		if ok != c.ok || got != c.want {
			t.Errorf("EditSize(%d, %d, %d, %d) = %d, %v; want %d, %v", c.size, c.n, c.old, c.new, got, ok, c.want, c.ok)
		}
	}
}

// TestGitDirByStructure: issue 18.2's four writes, each as the write that
// would complete a repository in a folder of any name (or, for config, in
// one already complete), are refused before anyone is asked; config
// setting a command is refused where no repository is near.
func TestGitDirByStructure(t *testing.T) {
	cases := []struct {
		disk          []string
		path, content string
		want          string
	}{
		{[]string{"x/objects/.keep", "x/refs/.keep"}, "x/HEAD", "ref: refs/heads/main\n", "is inside x, which git reads as a repository"},
		{[]string{"x/HEAD", "x/refs/.keep"}, "x/objects/info/.keep", "", "is inside x, which git reads as a repository"},
		{[]string{"x/HEAD", "x/objects/info/.keep"}, "x/refs/heads/.keep", "", "is inside x, which git reads as a repository"},
		{[]string{"x/HEAD", "x/objects/.keep", "x/refs/.keep"}, "x/config", "[user]\n\tname = a\n", "is inside x, which git reads as a repository"},
		{nil, "x/config", "[core]\n\tfsmonitor = touch pwned\n", "would hold git configuration that sets core.fsmonitor"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			f := newFixture(t, "y\n")
			for _, d := range c.disk {
				f.write(d, "")
			}
			res := f.propose("propose_write", write(c.path, c.content))
			if want := "refused: " + c.path + " " + c.want; !res.IsError || !strings.HasPrefix(res.Text, want) {
				t.Errorf("result %+v, want %q", res, want)
			}
			if f.opens != 0 {
				t.Error("prompt shown")
			}
			if _, ok := f.read(c.path); ok {
				t.Errorf("%s written", c.path)
			}
		})
	}
}

// TestDiffHidesTheFilesSecrets: issue 18.4 at the gate. The current
// file's secrets are hidden wherever the diff shows them (kept, removed
// and changed lines), and text the model adds is shown whole even when it
// looks like a secret, so nothing the model writes can hide from the
// person approving it.
func TestDiffHidesTheFilesSecrets(t *testing.T) {
	token := "ghp_" + "R8fQ2mZx7LwK1pVt9sNb3cYh5JdUe6Ga4Xo0"
	added := "ghp_" + "Zk3Lq9Wm2Xn7Bv4Cs8Dt1Fy6Gh5Jr0Pu3Ea7"
	src := "a = 1\nTOKEN=" + token + " # ci\nb = 2\n"
	f := newFixture(t, "n\n", func(o *Options) { o.Redactor = redact.New() })
	f.write("conf.sh", src)
	res := f.propose("propose_edit", map[string]any{"path": "conf.sh", "old_text": "# ci\nb = 2", "new_text": "# ci, rotated\nb = 3\nNEXT=" + added})
	if !res.IsError || !strings.HasPrefix(res.Text, "rejected:") {
		t.Fatalf("result %+v", res)
	}
	screen := f.tty.String()
	if strings.Contains(screen, token) {
		t.Errorf("the file's token reached the screen:\n%s", screen)
	}
	for _, want := range []string{"-TOKEN=[redacted: github-pat] # ci", "+TOKEN=[redacted: github-pat] # ci, rotated", "+NEXT=" + added, "shown as [redacted: RULE] in 2 diff lines"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}

	// Without a redactor (--redact=false) the diff shows the file as it is.
	f = newFixture(t, "n\n")
	f.write("conf.sh", src)
	f.propose("propose_edit", map[string]any{"path": "conf.sh", "old_text": "b = 2", "new_text": "b = 3"})
	if !strings.Contains(f.tty.String(), token) {
		t.Errorf("without a redactor the diff hides the token:\n%s", f.tty.String())
	}
}

// TestDiffHidesConfigSecrets: issue 29. The diff finds the file's secrets
// as the tools' view does, by the rules for its shape: a password in an
// ini file is hidden, the same line in Go source is not.
func TestDiffHidesConfigSecrets(t *testing.T) {
	pw := "hunter" + "2-Zq8x"
	for _, c := range []struct {
		name   string
		hidden bool
	}{{"app.ini", true}, {"app.go", false}} {
		f := newFixture(t, "n\n", func(o *Options) { o.Redactor = redact.New() })
		f.write(c.name, "password = "+pw+"\nb = 2\n")
		f.propose("propose_edit", map[string]any{"path": c.name, "old_text": "b = 2", "new_text": "b = 3"})
		screen := f.tty.String()
		if strings.Contains(screen, pw) == c.hidden {
			t.Errorf("%s: the password shown %v, want %v:\n%s", c.name, !c.hidden, !c.hidden, screen)
		}
		if c.hidden && !strings.Contains(screen, " password = [redacted: moat-config-secret]") {
			t.Errorf("%s: no mark in the diff:\n%s", c.name, screen)
		}
	}
}

// TestRedactionMarksAreNotWrittenBack: a model that writes back a file it
// read with a secret redacted would replace the secret with the mark; the
// proposal is refused before anyone is asked, and an edit whose old_text
// holds a mark is told why it does not match.
func TestRedactionMarksAreNotWrittenBack(t *testing.T) {
	token := "ghp_" + "R8fQ2mZx7LwK1pVt9sNb3cYh5JdUe6Ga4Xo0"
	f := newFixture(t, "y\n", func(o *Options) { o.Redactor = redact.New() })
	f.write("conf.sh", "TOKEN="+token+"\nb = 2\n")
	res := f.propose("propose_write", write("conf.sh", "TOKEN=[redacted: github-pat]\nb = 3\n"))
	if want := "refused: conf.sh would hold 1 [redacted: RULE] mark where the file has secrets"; !res.IsError || !strings.HasPrefix(res.Text, want) {
		t.Errorf("result %+v, want %q", res, want)
	}
	res = f.propose("propose_edit", map[string]any{"path": "conf.sh", "old_text": "TOKEN=[redacted: github-pat]\nb = 2", "new_text": "TOKEN=x\nb = 3"})
	if !res.IsError || !strings.Contains(res.Text, "old_text not found") || !strings.Contains(res.Text, "stands for a secret moat hid from you") {
		t.Errorf("result %+v", res)
	}
	if got, _ := f.read("conf.sh"); !strings.Contains(got, token) || f.opens != 0 {
		t.Errorf("file %q, prompts %d", got, f.opens)
	}
	// The edit around the mark is made, and the secret kept.
	if res := f.propose("propose_edit", map[string]any{"path": "conf.sh", "old_text": "b = 2", "new_text": "b = 3"}); res.IsError {
		t.Errorf("edit around the secret: %+v", res)
	}
	if got, _ := f.read("conf.sh"); got != "TOKEN="+token+"\nb = 3\n" {
		t.Errorf("file %q", got)
	}
}

// TestRootIsARepository: a workspace root that git reads as a repository
// takes no write at all, and says so plainly.
func TestRootIsARepository(t *testing.T) {
	f := newFixture(t, "y\n")
	for _, d := range []string{"objects/.keep", "refs/.keep"} {
		f.write(d, "")
	}
	f.write("HEAD", "ref: refs/heads/main\n")
	res := f.propose("propose_write", write("notes.txt", "x\n"))
	if want := "refused: notes.txt is inside the workspace root, which git reads as a repository"; !res.IsError || !strings.HasPrefix(res.Text, want) {
		t.Errorf("result %+v, want %q", res, want)
	}
}
