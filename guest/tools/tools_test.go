package tools

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/moatdev/moat/guest/proto"
)

// call runs one tool with args (a struct, a map, or a raw JSON string).
func call(t testing.TB, fsys fs.FS, tool string, args any, lim proto.Limits) proto.Response {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case nil:
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	resp := Run(fsys, proto.Request{ID: 42, Tool: tool, Args: raw, Limits: lim})
	if resp.ID != 42 {
		t.Fatalf("response ID = %d, want 42", resp.ID)
	}
	if resp.IsError != strings.HasPrefix(resp.Text, "error: ") {
		t.Fatalf("IsError=%v but text %q", resp.IsError, resp.Text)
	}
	return resp
}

// toolCase is one row of the per-tool tables: arguments in, exact text out.
type toolCase struct {
	name string
	args any
	lim  proto.Limits
	want string
}

func runCases(t *testing.T, fsys fs.FS, tool string, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, fsys, tool, tc.args, tc.lim)
			if got.Text != tc.want {
				t.Errorf("%s(%v):\ngot:\n%s\nwant:\n%s", tool, tc.args, got.Text, tc.want)
			}
		})
	}
}

// mtime is every test file's modification time, in a zone other than UTC
// so that stat's conversion shows.
func mtime() time.Time { return time.Date(2026, 11, 29, 21, 55, 59, 0, time.FixedZone("CET", 3600)) }

func file(s string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(s), Mode: 0o644, ModTime: mtime()}
}
func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777, ModTime: mtime()}
}
func dir() *fstest.MapFile { return &fstest.MapFile{Mode: fs.ModeDir | 0o755, ModTime: mtime()} }
func special(m fs.FileMode) *fstest.MapFile {
	return &fstest.MapFile{Mode: m | 0o644, ModTime: mtime()}
}

// errFS injects the errors the host mount produces (EXDEV for a symlink out
// of the root, EACCES for a denied file...) for chosen paths.
type errFS struct {
	fstest.MapFS
	errs map[string]error
}

func (e errFS) err(op, name string) error {
	if err, ok := e.errs[name]; ok {
		return &fs.PathError{Op: op, Path: "/host/secret/root/" + name, Err: err}
	}
	return nil
}

func (e errFS) Open(name string) (fs.File, error) {
	if err := e.err("open", name); err != nil {
		return nil, err
	}
	return e.MapFS.Open(name)
}

func (e errFS) Stat(name string) (fs.FileInfo, error) {
	if err := e.err("stat", name); err != nil {
		return nil, err
	}
	return e.MapFS.Stat(name)
}

func (e errFS) Lstat(name string) (fs.FileInfo, error) {
	if err := e.err("lstat", name); err != nil {
		return nil, err
	}
	return e.MapFS.Lstat(name)
}

func (e errFS) ReadLink(name string) (string, error) {
	if err := e.err("readlink", name); err != nil {
		return "", err
	}
	return e.MapFS.ReadLink(name)
}

// ReadDir hides MapFS.ReadDir so that reads go through Open.
func (e errFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := e.err("readdir", name); err != nil {
		return nil, err
	}
	return e.MapFS.ReadDir(name)
}

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "."},
		{".", "."},
		{"./", "."},
		{"./a/b", "a/b"},
		{"a//b/", "a/b"},
		{"a/./b", "a/b"},
		{`a\..\b`, `a\..\b`}, // a backslash is a name character on WASI
		{"..foo", "..foo"},
		{"~", "~"},
		{"%2e%2e/x", "%2e%2e/x"},
	} {
		got, err := cleanPath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("cleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"..", "../x", "/etc/passwd", "/", "a\x00b", "../root-evil/x"} {
		_, err := cleanPath(in)
		want := "error: path escapes the sandbox: " + in
		if err == nil || err.Error() != want {
			t.Errorf("cleanPath(%q) error = %v; want %q", in, err, want)
		}
	}
}

func TestRunEscapesEveryTool(t *testing.T) {
	fsys := fstest.MapFS{"a": file("x")}
	for _, tool := range []string{proto.ListDir, proto.ReadFile, proto.Stat, proto.Grep, proto.Glob} {
		got := call(t, fsys, tool, map[string]any{"path": "../x", "pattern": "x"}, proto.Limits{})
		if want := "error: path escapes the sandbox: ../x"; got.Text != want {
			t.Errorf("%s: got %q, want %q", tool, got.Text, want)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	fsys := errFS{
		MapFS: fstest.MapFS{"ok.txt": file("x\n")},
		errs: map[string]error{
			"out":    syscall.EXDEV,
			"denied": syscall.EACCES,
			"perm":   fs.ErrPermission,
			"eperm":  syscall.EPERM,
			"mode":   proto.ErrnoOSDenied,
			"loop":   syscall.ELOOP,
			"notdir": syscall.ENOTDIR,
			"isdir":  syscall.EISDIR,
			"gone":   fs.ErrNotExist,
			"weird":  errors.New("disk on fire"),
		},
	}
	want := map[string]string{
		"out":    "error: path escapes the sandbox through a symlink: out",
		"denied": "error: access denied by the sandbox policy: denied",
		"perm":   "error: access denied by the sandbox policy: perm",
		"eperm":  "error: path escapes the sandbox through a symlink: eperm",
		"mode":   "error: permission denied by the file system: mode (its mode or owner does not let moat read it)",
		"loop":   "error: too many levels of symbolic links: loop",
		"notdir": "error: not a folder: notdir",
		"isdir":  "error: isdir is a folder; use list_dir",
		"gone":   "error: no such file or directory: gone",
		"weird":  "error: TOOL weird: disk on fire",
	}
	for _, tool := range []string{proto.ListDir, proto.ReadFile, proto.Stat, proto.Grep, proto.Glob} {
		for p, w := range want {
			got := call(t, fsys, tool, map[string]any{"path": p, "pattern": "x"}, proto.Limits{})
			w = strings.Replace(w, "TOOL", tool, 1)
			if got.Text != w {
				t.Errorf("%s %s: got %q, want %q", tool, p, got.Text, w)
			}
			if strings.Contains(got.Text, "/host/") {
				t.Errorf("%s %s: host path leaked: %q", tool, p, got.Text)
			}
		}
	}
}

func TestMalformedAndUnknown(t *testing.T) {
	fsys := fstest.MapFS{"a": file("x")}
	for _, tc := range []struct{ tool, args, want string }{
		{"rm_rf", `{}`, "error: unknown tool: rm_rf"},
		{"", `{}`, "error: unknown tool: "},
		{proto.ReadFile, `{"path": 7}`, "error: invalid arguments for read_file: path: want a string"},
		{proto.ListDir, `[1,2]`, "error: invalid arguments for list_dir: want an object"},
		{proto.Grep, `{"pattern":`, "error: invalid arguments for grep: pattern: unexpected end of JSON input"},
		{proto.Stat, `"x"`, "error: invalid arguments for stat: want an object"},
		{proto.ReadFile, `{"path":"a","offset":-1}`, "error: offset must be 1 or more, got -1"},
		{proto.ReadFile, `{"path":"a","limit":-3}`, "error: limit must be 1 or more, got -3"},
	} {
		got := call(t, fsys, tc.tool, tc.args, proto.Limits{})
		if got.Text != tc.want {
			t.Errorf("%s %s: got %q, want %q", tc.tool, tc.args, got.Text, tc.want)
		}
	}
	// No args at all is the same as {}.
	if got := call(t, fsys, proto.ListDir, nil, proto.Limits{}); got.Text != "a" {
		t.Errorf("list_dir without args: %q", got.Text)
	}
}

// panicFS stands for a bug anywhere below Run.
type panicFS struct{}

func (panicFS) Open(string) (fs.File, error) { panic("boom") }

func TestRunRecoversPanics(t *testing.T) {
	for _, tool := range []string{proto.ListDir, proto.ReadFile, proto.Stat, proto.Grep, proto.Glob} {
		got := call(t, panicFS{}, tool, `{"path":"x","pattern":"x"}`, proto.Limits{})
		if want := "error: internal error in " + tool + ": boom"; got.Text != want {
			t.Errorf("%s: got %q, want %q", tool, got.Text, want)
		}
	}
}

func TestGarbageNeverPanics(t *testing.T) {
	fsys := fstest.MapFS{"a/b.txt": file("hello\n"), "l": link("a")}
	garbage := []string{``, `null`, `{}`, `{"path":null}`, `{"path":"\u0000"}`, `{"path":"a","offset":1e99}`,
		`{"pattern":"(","glob":"["}`, `{"pattern":"\\","path":"a/b.txt"}`, `{"limit":9223372036854775807,"path":"a/b.txt"}`,
		`{"path":"a/b.txt","offset":9223372036854775807}`, `{"pattern":"**/[","path":"l"}`, `{"path":"/"}`, `{"path":"a/b.txt/"}`}
	for _, tool := range []string{proto.ListDir, proto.ReadFile, proto.Stat, proto.Grep, proto.Glob} {
		for _, g := range garbage {
			for _, lim := range []proto.Limits{{}, {MaxReadBytes: -1, MaxResults: -1}, {MaxReadBytes: 1, MaxResults: 1}} {
				got := call(t, fsys, tool, g, lim)
				if strings.Contains(got.Text, "internal error") {
					t.Errorf("%s %s: %q", tool, g, got.Text)
				}
			}
		}
	}
}

func TestCutUTF8(t *testing.T) {
	s := []byte("aé€😀")
	for n, want := range map[int]string{0: "", 1: "a", 2: "a", 3: "aé", 4: "aé", 5: "aé", 6: "aé€", 9: "aé€", 10: "aé€😀", 99: "aé€😀"} {
		if got := string(cutUTF8(s, n)); got != want {
			t.Errorf("cutUTF8(%d) = %q, want %q", n, got, want)
		}
	}
}
