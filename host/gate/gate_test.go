package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/moatdev/moat/host/display"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
)

// fakeTTY is a terminal made of a reader (the person's keys) and a buffer
// (the screen).
type fakeTTY struct {
	in     io.Reader
	mu     sync.Mutex
	screen bytes.Buffer
	closed bool
}

func (f *fakeTTY) Read(p []byte) (int, error) { return f.in.Read(p) }
func (f *fakeTTY) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.screen.Write(p)
}
func (f *fakeTTY) Close() error {
	if c, ok := f.in.(io.Closer); ok {
		c.Close()
	}
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}
func (f *fakeTTY) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.screen.String()
}

// cooked returns at most one line per Read, as a terminal in canonical
// mode does, so each prompt reads only its own answer.
type cooked struct{ r *strings.Reader }

func (c *cooked) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, err := c.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		p[n] = b
		n++
		if b == '\n' {
			break
		}
	}
	return n, nil
}

// fixture is a sandbox root inside a parent folder that also holds files
// that must never be touched ("outside").
type fixture struct {
	t       *testing.T
	parent  string // holds root and outside
	root    string
	outside string
	gate    *Gate
	tty     *fakeTTY
	opens   int // how many times the terminal was opened
	noTTY   bool
}

func newFixture(t *testing.T, answer string, opt ...func(*Options)) *fixture {
	t.Helper()
	parent := t.TempDir()
	f := &fixture{t: t, parent: parent, root: filepath.Join(parent, "work"), outside: filepath.Join(parent, "outside")}
	for _, d := range []string{f.root, f.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.tty = &fakeTTY{in: &cooked{r: strings.NewReader(answer)}}
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Root: f.root, Policy: pol,
		OpenTTY: func() (TTY, error) {
			f.opens++
			if f.noTTY {
				return nil, ErrNoTerminal
			}
			return f.tty, nil
		},
	}
	for _, fn := range opt {
		fn(&o)
	}
	if f.gate, err = New(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.gate.Close() })
	return f
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(rel)))
	return string(b), err == nil
}

func (f *fixture) propose(tool string, args any) toolspec.Result {
	f.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.gate.Propose(context.Background(), tool, raw)
}

func write(path, content string) map[string]any {
	return map[string]any{"path": path, "content": content}
}

// noTemp fails if a temporary file was left anywhere under the parent.
func (f *fixture) noTemp() {
	f.t.Helper()
	filepath.WalkDir(f.parent, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			f.t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestWriteApproved(t *testing.T) {
	f := newFixture(t, "y\n")
	content := "line one\n\tline two\r\nno final newline"
	res := f.propose("propose_write", write("notes/sub/a.txt", content))
	if res.IsError || !res.Written || res.Text != fmt.Sprintf("wrote notes/sub/a.txt (%d bytes)", len(content)) {
		t.Fatalf("result: %+v", res)
	}
	got, ok := f.read("notes/sub/a.txt")
	if !ok || got != content {
		t.Fatalf("file holds %q, want %q", got, content)
	}
	fi, _ := os.Stat(filepath.Join(f.root, "notes/sub/a.txt"))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	// The file is named by its absolute path: the root's name and a path
	// would read as relative to wherever the person is.
	screen, abs := f.tty.String(), f.root
	for _, want := range []string{
		"path     notes/sub/a.txt  (as the model wrote it)",
		"file     " + abs + "/notes/sub/a.txt",
		"create a new file, 36 bytes",
		"will be created: " + abs + "/notes/, " + abs + "/notes/sub/",
		"does not end with a newline",
		"+line one\n+\tline two\\r\n+no final newline\n\\ No newline at end of file\n",
		"--- /dev/null\n+++ b/notes/sub/a.txt\n@@ -0,0 +1,3 @@\n",
		"moat: create " + abs + "/notes/sub/a.txt (36 bytes, 2 new folders)\nCreate notes/sub/a.txt? [y]es / [N]o / [r]eason (no, and tell the model why) / [a]gain (the whole diff) ",
		"moat: wrote " + abs + "/notes/sub/a.txt (36 bytes)",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("prompt lacks %q:\n%s", want, screen)
		}
	}
	f.noTemp()
}

func TestAnswers(t *testing.T) {
	const (
		declined = "rejected: the user declined to write a.txt; nothing was changed. Do not propose the same change again; ask the user what they want instead."
		noAnswer = "rejected: the user did not approve a.txt (no answer: the terminal reached end of input); nothing was changed."
	)
	cases := []struct {
		answer string
		ok     bool
		want   string
	}{
		{"y\n", true, ""}, {"Y\n", true, ""}, {"yes\n", true, ""}, {"  YeS \n", true, ""}, {"y\r\n", true, ""},
		{"n\n", false, declined}, {"\n", false, declined}, {"no\ny\n", false, declined}, {"N\n", false, declined},
		{"", false, noAnswer}, {"y", false, noAnswer}, // no Enter: end of input
		// Anything else asks again; end of input then is no answer.
		{"yes please\n", false, noAnswer}, {"yy\n", false, noAnswer}, {"ok\n", false, noAnswer},
		{"ok\nn\n", false, declined}, {"what\ny\n", true, ""},
		{"r\nuse tabs, not spaces\n", false, `rejected: the user declined to write a.txt and said why: "use tabs, not spaces". Nothing was changed. Do not propose the same change again; take the user's reason into account.`},
		{"r keep it short\n", false, `rejected: the user declined to write a.txt and said why: "keep it short".`},
		{"r\n\n", false, declined}, {"r\n", false, declined},
		{"r \x1b[2Jsneaky\n", false, `said why: "\x1b[2Jsneaky"`},
	}
	for _, tc := range cases {
		f := newFixture(t, tc.answer)
		f.write("a.txt", "old\n")
		res := f.propose("propose_write", write("a.txt", "new\n"))
		got, _ := f.read("a.txt")
		if tc.ok {
			if res.IsError || got != "new\n" {
				t.Errorf("answer %q: %+v, file %q", tc.answer, res, got)
			}
			continue
		}
		if !res.IsError || !strings.Contains(res.Text, tc.want) || got != "old\n" {
			t.Errorf("answer %q: %+v, file %q; want %q", tc.answer, res, got, tc.want)
		}
		f.noTemp()
	}
}

func TestNoTerminal(t *testing.T) {
	f := newFixture(t, "y\n")
	f.noTTY = true
	res := f.propose("propose_write", write("a.txt", "x"))
	if !res.IsError || !strings.HasPrefix(res.Text, "refused: a.txt cannot be approved: there is no terminal") {
		t.Fatalf("result: %+v", res)
	}
	if _, ok := f.read("a.txt"); ok {
		t.Fatal("file written without a terminal")
	}
}

// TestRefused is the table of writes that must never reach the disk. Each
// is refused before the person is asked, and nothing appears outside.
func TestRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and hard links need privileges on Windows")
	}
	cases := []struct {
		name  string
		setup func(f *fixture)
		path  string
		want  string
	}{
		{"dotdot", nil, "../outside/x", "refused: path escapes the sandbox: ../outside/x"},
		{"sibling prefix", nil, "../work-evil/x", "refused: path escapes the sandbox"},
		{"absolute", nil, "/etc/passwd", "refused: absolute paths are not allowed"},
		{"root", nil, ".", "refused: . is the workspace root"},
		{"symlink out", func(f *fixture) {
			os.WriteFile(filepath.Join(f.outside, "secret"), []byte("s"), 0o644)
			os.Symlink("../outside/secret", filepath.Join(f.root, "link"))
		}, "link", "refused: link is a symbolic link"},
		{"symlink absolute", func(f *fixture) {
			os.Symlink(filepath.Join(f.outside, "secret"), filepath.Join(f.root, "link"))
		}, "link", "is a symbolic link"},
		{"dangling symlink", func(f *fixture) {
			os.Symlink("../outside/created", filepath.Join(f.root, "dangling"))
		}, "dangling", "refused: dangling is a symbolic link"},
		{"symlink inside", func(f *fixture) {
			f.write("real.txt", "r")
			os.Symlink("real.txt", filepath.Join(f.root, "alias"))
		}, "alias", "is a symbolic link"},
		{"symlinked folder out", func(f *fixture) {
			os.Symlink("../outside", filepath.Join(f.root, "dir"))
		}, "dir/new.txt", "refused: dir/new.txt is under dir, a symbolic link"},
		{"symlinked folder inside", func(f *fixture) {
			os.Mkdir(filepath.Join(f.root, "real"), 0o755)
			os.Symlink("real", filepath.Join(f.root, "dir"))
		}, "dir/new.txt", "is under dir, a symbolic link"},
		{"deep symlinked folder", func(f *fixture) {
			os.MkdirAll(filepath.Join(f.root, "a/b"), 0o755)
			os.Symlink("../../../outside", filepath.Join(f.root, "a/b/c"))
		}, "a/b/c/d/e.txt", "is under a/b/c, a symbolic link"},
		{"hard link", func(f *fixture) {
			os.WriteFile(filepath.Join(f.outside, "linked"), []byte("s"), 0o644)
			if err := os.Link(filepath.Join(f.outside, "linked"), filepath.Join(f.root, "hard")); err != nil {
				f.t.Skip("hard links unsupported:", err)
			}
		}, "hard", "refused: hard has 2 hard links"},
		{"fifo", func(f *fixture) {
			if err := mkfifo(filepath.Join(f.root, "fifo")); err != nil {
				f.t.Skip("mkfifo:", err)
			}
		}, "fifo", "is not a regular file"},
		{"folder", func(f *fixture) { os.Mkdir(filepath.Join(f.root, "d"), 0o755) }, "d", "is a folder, not a file"},
		{"parent is a file", func(f *fixture) { f.write("file", "x") }, "file/x.txt", "file is not a folder"},
		{"git", nil, ".git/config", `matches the write deny rule ".git"`},
		{"git hooks", func(f *fixture) { os.MkdirAll(filepath.Join(f.root, ".git/hooks"), 0o755) }, ".git/hooks/pre-commit", `deny rule ".git"`},
		{"env", nil, "app/.env.local", `deny rule ".env.*"`},
		{"env case", nil, ".ENV", `deny rule ".env"`},
		{"vscode", nil, ".vscode/settings.json", `deny rule ".vscode/settings.json"`},
		{"mcp", nil, ".mcp.json", `deny rule ".mcp.json"`},
		{"moat conf", nil, ".moat.conf", `deny rule ".moat.conf"`},
		{"escape in name", nil, "a\x1b]0;pwned\x07.txt", `refused: a\x1b]0;pwned\x07.txt contains control or invisible characters`},
		{"bidi in name", nil, "evil\u202etxt.exe", `refused: evil\u202etxt.exe contains control`},
		{"newline in name", nil, "a\nb", `refused: a\nb contains control`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "y\n")
			if tc.setup != nil {
				tc.setup(f)
			}
			before := snapshotTree(t, f.parent)
			res := f.propose("propose_write", write(tc.path, "pwned\n"))
			if !res.IsError || !strings.Contains(res.Text, tc.want) || !strings.HasPrefix(res.Text, "refused: ") {
				t.Errorf("result %q, want it to contain %q", res.Text, tc.want)
			}
			if strings.ContainsRune(res.Text, 0x1b) || strings.Contains(res.Text, f.parent) {
				t.Errorf("result carries ESC or the host path: %q", res.Text)
			}
			if f.opens != 0 {
				t.Errorf("the terminal was opened for a refused write")
			}
			if after := snapshotTree(t, f.parent); after != before {
				t.Errorf("the disk changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// snapshotTree lists every path under dir with its size and content, so a
// test can tell whether anything changed.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := os.Lstat(p)
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

func TestReplaceKeepsMode(t *testing.T) {
	f := newFixture(t, "y\n")
	f.write("s.sh", "#!/bin/sh\necho old\n")
	os.Chmod(filepath.Join(f.root, "s.sh"), 0o751)
	res := f.propose("propose_write", write("./s.sh", "#!/bin/sh\necho new\n"))
	if res.IsError || res.Text != "wrote ./s.sh (19 bytes)" {
		t.Fatalf("result %+v", res)
	}
	fi, _ := os.Stat(filepath.Join(f.root, "s.sh"))
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751", fi.Mode().Perm())
	}
	screen := f.tty.String()
	for _, want := range []string{"replace the existing file: 19 -> 19 bytes, mode 0751 kept", "-echo old\n+echo new\n", "--- a/s.sh\n+++ b/s.sh\n"} {
		if !strings.Contains(screen, want) {
			t.Errorf("prompt lacks %q:\n%s", want, screen)
		}
	}
	f.noTemp()
}

func TestEdit(t *testing.T) {
	const src = "a := 1\nb := 2\na := 1\nc := 3\n"
	edit := func(old, new string, all bool) map[string]any {
		return map[string]any{"path": "x.go", "old_text": old, "new_text": new, "replace_all": all}
	}
	cases := []struct {
		name string
		args map[string]any
		res  string // prefix of the result
		file string // content afterwards
	}{
		{"unique", edit("b := 2", "b := 20", false), "wrote x.go (29 bytes)", "a := 1\nb := 20\na := 1\nc := 3\n"},
		{"all", edit("a := 1", "a := 9", true), "wrote x.go (28 bytes)", "a := 9\nb := 2\na := 9\nc := 3\n"},
		{"none", edit("d := 4", "", false), "error: old_text not found in x.go;", src},
		{"several", edit("a := 1", "z", false), "error: old_text occurs 2 times in x.go (at lines 1, 3); include more", src},
		{"multiline several", edit("1\n", "", false), "error: old_text occurs 2 times in x.go (at lines 1, 3)", src},
		{"empty", edit("", "x", false), "error: old_text is empty", src},
		{"same", edit("c := 3", "c := 3", false), "error: old_text and new_text are the same", src},
		{"missing", map[string]any{"path": "nope.go", "old_text": "a", "new_text": "b"}, "error: nope.go does not exist; use propose_write", src},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "y\n")
			f.write("x.go", src)
			res := f.propose("propose_edit", tc.args)
			if !strings.HasPrefix(res.Text, tc.res) || res.IsError != strings.HasPrefix(tc.res, "error") {
				t.Errorf("result %+v, want %q", res, tc.res)
			}
			if got, _ := f.read("x.go"); got != tc.file {
				t.Errorf("file %q, want %q", got, tc.file)
			}
			if res.IsError && f.opens != 0 {
				t.Errorf("prompt shown for a failed edit")
			}
		})
	}
}

// changingReader modifies the disk when the person starts answering, that
// is, after the diff was shown.
type changingReader struct {
	once   sync.Once
	change func()
	answer io.Reader
}

func (c *changingReader) Read(p []byte) (int, error) {
	c.once.Do(c.change)
	return c.answer.Read(p)
}

func TestChangedDuringReview(t *testing.T) {
	cases := []struct {
		name   string
		exists bool
		change func(f *fixture)
	}{
		{"content", true, func(f *fixture) { f.write("a.txt", "edited by someone else\n") }},
		{"same size content", true, func(f *fixture) { f.write("a.txt", "OLD\n") }},
		{"replaced by symlink", true, func(f *fixture) {
			os.Remove(filepath.Join(f.root, "a.txt"))
			os.Symlink("../outside/target", filepath.Join(f.root, "a.txt"))
		}},
		{"new file appeared", false, func(f *fixture) { f.write("a.txt", "surprise\n") }},
		{"new dangling link appeared", false, func(f *fixture) {
			os.Symlink("../outside/target", filepath.Join(f.root, "a.txt"))
		}},
		{"mode changed", true, func(f *fixture) { os.Chmod(filepath.Join(f.root, "a.txt"), 0o600) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			if tc.exists {
				f.write("a.txt", "old\n")
			}
			f.tty.in = &changingReader{change: func() { tc.change(f) }, answer: strings.NewReader("y\n")}
			res := f.propose("propose_write", write("a.txt", "model\n"))
			if !res.IsError || !strings.Contains(res.Text, "propose the change again") || !strings.HasPrefix(res.Text, "refused: a.txt ") {
				t.Fatalf("result %+v", res)
			}
			if got, _ := f.read("a.txt"); got == "model\n" {
				t.Fatal("a file changed during review was overwritten")
			}
			if _, err := os.Lstat(filepath.Join(f.outside, "target")); err == nil {
				t.Fatal("a file was created outside the root")
			}
			f.noTemp()
		})
	}
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestEscapesNeverReachTheTerminal(t *testing.T) {
	evil := "title\x1b]0;pwned\x07 clip\x1b]52;c;cm0gLXJmIH4=\x07 link\x1b]8;;http://x/\x1b\\t\x1b]8;;\x1b\\\n" +
		"erase\x1b[2K\x1b[1A\rhidden\n" +
		"dcs\x1bP+q\x1b\\ c1\u009b31m\u009d0;x\u009c\n" +
		"bidi if admin \u202e } \u2066x\u2069 zw\u200b\u200c\u200d\u2060\ufeff\n"
	for _, color := range []bool{false, true} {
		f := newFixture(t, "n\n", func(o *Options) { o.Color = color })
		f.write("a.txt", "old \x1b[31m line\n") // the existing file is untrusted too
		f.propose("propose_write", write("a.txt", evil))
		screen := f.tty.String()
		if color {
			if !strings.Contains(screen, "\x1b[7m\\x1b\x1b[27m") {
				t.Errorf("escapes not highlighted in colour:\n%q", screen)
			}
			screen = sgr.ReplaceAllString(screen, "") // the gate's own colours
		}
		for _, r := range screen {
			if r == 0x1b || r == '\r' || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
				(r >= 0x200b && r <= 0x200d) || r == 0x2060 || r == 0xfeff || r == 0x07 {
				t.Fatalf("color=%v: %U reached the terminal:\n%q", color, r, screen)
			}
		}
		for _, want := range []string{`+title\x1b]0;pwned\x07`, `\x1b]52;c;`, `\x1b[2K\x1b[1A\rhidden`, `\u009b31m`, `\u202e`, `\ufeff`, "-old \\x1b[31m line",
			"the new content has 24 control or invisible characters"} {
			if !strings.Contains(screen, want) {
				t.Errorf("color=%v: prompt lacks %q:\n%s", color, want, screen)
			}
		}
	}
}

func TestBinaryAndUnchanged(t *testing.T) {
	f := newFixture(t, "y\n")
	f.write("img.bin", "\x89PNG\x00\xff\xfe")
	if res := f.propose("propose_write", write("img.bin", "text now\n")); res.IsError {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(f.tty.String(), "the current file is binary") || strings.Contains(f.tty.String(), "PNG") {
		t.Errorf("binary file shown:\n%s", f.tty.String())
	}
	f = newFixture(t, "y\n")
	f.write("same.txt", "same\n")
	res := f.propose("propose_write", write("same.txt", "same\n"))
	if !res.IsError || !strings.Contains(res.Text, "already has exactly this content") || f.opens != 0 {
		t.Errorf("unchanged write: %+v (terminal opened %d times)", res, f.opens)
	}
}

func TestInterrupted(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	f := newFixture(t, "")
	f.tty.in = pr
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan toolspec.Result)
	go func() {
		done <- f.gate.Propose(ctx, "propose_write", json.RawMessage(`{"path":"a.txt","content":"x"}`))
	}()
	// Wait until the prompt is on screen, then give up on the answer.
	for !strings.Contains(f.tty.String(), "[y]es") {
		runtime.Gosched()
	}
	cancel()
	res := <-done
	if !res.IsError || res.Text != "refused: a.txt was not approved: the question at the terminal was interrupted before the user answered; nothing was written." {
		t.Fatalf("result %+v", res)
	}
	if _, ok := f.read("a.txt"); ok {
		t.Fatal("written after interruption")
	}
}

func TestAudit(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	f := newFixture(t, "y\n", func(o *Options) { o.AuditPath = log })
	f.write("a.txt", "old\n")
	f.propose("propose_write", write("a.txt", "new\n"))
	f.tty.in = &cooked{r: strings.NewReader("n\n")}
	f.propose("propose_write", write("b.txt", "b\n"))
	f.propose("propose_write", write("../x", "b\n"))
	f.propose("propose_edit", map[string]any{"path": "a.txt", "old_text": "zzz", "new_text": "y"})
	f.gate.Close()

	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("audit mode %v, want 0600", fi.Mode().Perm())
	}
	fh, _ := os.Open(log)
	defer fh.Close()
	var recs []Record
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	want := []struct{ decision, path, before, after string }{
		{"written", "a.txt", sha256hex([]byte("old\n")), sha256hex([]byte("new\n"))},
		{"rejected", "b.txt", "", ""},
		{"refused", "../x", "", ""},
		{"error", "a.txt", sha256hex([]byte("new\n")), ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, w := range want {
		r := recs[i]
		if r.Decision != w.decision || r.Path != w.path || r.SHA256Before != w.before || r.SHA256After != w.after || r.Time.IsZero() {
			t.Errorf("record %d = %+v, want %+v", i, r, w)
		}
	}
	if !strings.Contains(recs[2].Reason, "escapes the sandbox") {
		t.Errorf("refusal reason %q", recs[2].Reason)
	}
}

func TestAuditLogInsideRootIsNotWritable(t *testing.T) {
	f := newFixture(t, "y\n")
	log := filepath.Join(f.root, "audit.jsonl")
	g, err := New(Options{Root: f.root, Policy: f.gate.opt.Policy, OpenTTY: f.gate.opt.OpenTTY, AuditPath: log})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	res := g.Propose(context.Background(), "propose_write", json.RawMessage(`{"path":"audit.jsonl","content":"forged\n"}`))
	if !res.IsError || !strings.Contains(res.Text, "audit log") {
		t.Fatalf("result %+v", res)
	}
}

func TestConcurrentProposalsAreSerialised(t *testing.T) {
	f := newFixture(t, strings.Repeat("y\n", 8))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.gate.Propose(context.Background(), "propose_write", json.RawMessage(fmt.Sprintf(`{"path":"f%d.txt","content":"%d"}`, i, i)))
		}()
	}
	wg.Wait()
	for i := range 8 {
		if got, _ := f.read(fmt.Sprintf("f%d.txt", i)); got != fmt.Sprint(i) {
			t.Errorf("f%d.txt = %q", i, got)
		}
	}
}

func TestErrorsIs(t *testing.T) {
	f := newFixture(t, "")
	os.Symlink("x", filepath.Join(f.root, "l"))
	_, err := f.gate.inspect("l")
	if !errors.Is(err, ErrSymlink) {
		t.Errorf("inspect(symlink) = %v, want ErrSymlink", err)
	}
}

// FuzzScreen: whatever the old file and the proposed content hold, the
// prompt (without colour) carries no byte a terminal would interpret.
func FuzzScreen(f *testing.F) {
	f.Add("old\n", "new\x1b]0;x\x07\n")
	f.Add("\xff\x00bin", "a\r\nb\u202e")
	f.Add("", "\u009b2J\n\n")
	pol, _ := policy.New(nil, nil)
	g := &Gate{opt: Options{Policy: pol, Root: "/work\x1b[2J"}}
	f.Fuzz(func(t *testing.T, old, content string) {
		p := &proposal{tool: "propose_write", given: "p\x1b", shown: "p", rel: "p", content: []byte(content)}
		snap := &snapshot{exists: old != "", data: []byte(old)}
		if snap.exists {
			snap.info = fakeInfo{}
		}
		r := g.review(screen{}, p, snap)
		lines := append(append(r.Header, r.Diff...), r.Summary(), r.Question(), r.Warning)
		for _, l := range lines {
			for i, r := range l {
				if r == utf8.RuneError && !strings.HasPrefix(l[i:], "\ufffd") || r < 0x20 && r != '\t' || r == 0x7f || display.Unsafe(r) {
					t.Fatalf("%U reached the screen in %q", r, l)
				}
			}
		}
	})
}

type fakeInfo struct{ os.FileInfo }

func (fakeInfo) Mode() os.FileMode { return 0o644 }
