package tools

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/wasifs"
)

// slowFS lists folders slowly, standing in for a huge tree.
type slowFS struct {
	fstest.MapFS
	delay time.Duration
	reads *int
}

func (s slowFS) ReadDir(name string) ([]fs.DirEntry, error) {
	*s.reads++
	time.Sleep(s.delay)
	return s.MapFS.ReadDir(name)
}

// A walk stops at its deadline (a share of Limits.TimeLimit) with a note,
// instead of going on until the whole tree is done.
func TestWalkStopsAtDeadline(t *testing.T) {
	m := fstest.MapFS{}
	const dirs = 400
	for i := range dirs {
		m["d"+strconv.Itoa(i)+"/f.txt"] = file("x\n")
	}
	reads := 0
	fsys := slowFS{MapFS: m, delay: 2 * time.Millisecond, reads: &reads}
	resp := call(t, fsys, proto.Glob, map[string]any{"pattern": "**/f.txt"},
		proto.Limits{MaxResults: 1000, TimeLimit: int64(50 * time.Millisecond)})
	if resp.IsError {
		t.Fatal(resp.Text)
	}
	if !strings.Contains(resp.Text, "[the time limit was reached before the whole tree was walked") {
		t.Errorf("no note of the time limit in:\n%s", resp.Text)
	}
	if reads > dirs/2 {
		t.Errorf("the walk read %d of %d folders after its deadline", reads, dirs+1)
	}

	// Without a time limit the walk is complete.
	reads = 0
	resp = call(t, slowFS{MapFS: m, reads: &reads}, proto.Glob, map[string]any{"pattern": "**/f.txt"}, proto.Limits{MaxResults: 1000})
	if n := strings.Count(resp.Text, "\n") + 1; n != dirs || strings.Contains(resp.Text, "[") {
		t.Errorf("without a time limit: %d lines:\n%s", n, resp.Text)
	}
}

// A brace bomb is refused with a message the model can act on, at once,
// and grep's glob filter matches nothing with it instead of working for
// hours.
func TestGlobBraceBomb(t *testing.T) {
	bomb := strings.Repeat("{a,a}", 40)
	fsys := fstest.MapFS{"a": file("x\n"), "b/aa": file("x\n")}
	resp := call(t, fsys, proto.Glob, map[string]any{"pattern": bomb}, proto.Limits{})
	if !resp.IsError || !strings.Contains(resp.Text, "too many {...} alternatives") {
		t.Errorf("brace bomb: %q", resp.Text)
	}
	if matchGlob(bomb, strings.Repeat("a", 40)) {
		t.Error("matchGlob matched a brace bomb")
	}
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{"*.go", 1}, {"**/*.{ts,tsx}", 2}, {"{src,test}/**/*.{c,h,cc}", 6}, {"{a,{b,c}}", 3},
		{`\{a,b}`, 1}, {"[{]a,b}", 1}, {"{a,b}{c,d}{e,f}", 8}, {strings.Repeat("{a,b}", 9), maxGlobAlternatives + 1},
	} {
		if got := braceAlternatives(c.pattern, maxGlobAlternatives); got != c.want {
			t.Errorf("braceAlternatives(%q) = %d, want %d", c.pattern, got, c.want)
		}
	}
	// Real patterns still work.
	resp = call(t, fsys, proto.Glob, map[string]any{"pattern": "{a,b/*}"}, proto.Limits{})
	if resp.Text != "a\nb/aa" {
		t.Errorf("{a,b/*}: %q", resp.Text)
	}
}

// Brace groups nested 2,000 deep stand for one pattern but cost doublestar
// a scan of the rest of the pattern per level and per path, which outran
// the call's deadline: both glob and grep's glob filter refuse them at
// once, naming the bound, and matchGlob matches nothing with them.
func TestGlobBraceNesting(t *testing.T) {
	deep := strings.Repeat("{", 2000) + "a" + strings.Repeat("}", 2000)
	fsys := fstest.MapFS{"a": file("x\n")}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{proto.Glob, map[string]any{"pattern": deep}},
		{proto.Grep, map[string]any{"pattern": "x", "glob": deep}},
	} {
		resp := call(t, fsys, c.tool, c.args, proto.Limits{})
		if !resp.IsError || !strings.HasPrefix(resp.Text, "error: glob pattern nests {...} groups more than 10 deep: ") {
			t.Errorf("%s with braces 2,000 deep: %.120q", c.tool, resp.Text)
		}
	}
	if matchGlob(deep, "a") {
		t.Error("matchGlob matched a pattern nested past the bound")
	}
	// At the bound, and with the same depth side by side, patterns work.
	atBound := strings.Repeat("{", maxGlobBraceDepth) + "a" + strings.Repeat("}", maxGlobBraceDepth)
	for _, p := range []string{atBound, atBound + "{b,}" + atBound, "{a,{b,{c,d}}}"} {
		if err := checkGlob(p); err != nil {
			t.Errorf("checkGlob(%q): %v", p, err)
		}
	}
	if resp := call(t, fsys, proto.Glob, map[string]any{"pattern": atBound}, proto.Limits{}); resp.Text != "a" {
		t.Errorf("%s: %q", atBound, resp.Text)
	}
	if _, depth := braceShape("{a,{b,{c,d}}}{e,{f}}", maxGlobAlternatives); depth != 3 {
		t.Errorf("depth of {a,{b,{c,d}}}{e,{f}} = %d, want 3", depth)
	}
}

// A megabyte of wildcard rules does not fail the search: the rules past
// the bounds are not applied, with a note, and memory stays small.
func TestHostileGitignore(t *testing.T) {
	var rules strings.Builder
	for i := 0; rules.Len() < 1<<20; i++ {
		rules.WriteString("**/*a*b*c*d*" + strconv.Itoa(i) + "*/**/x*y*z*\n")
	}
	fsys := fstest.MapFS{
		".gitignore":  file(rules.String()),
		"keep.go":     file("x\n"),
		"sub/keep.go": file("x\n"),
		"sub/" + strings.Repeat("abcd/", 20) + "keep.go": file("x\n"),
	}
	var resp proto.Response
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp = call(t, fsys, proto.Glob, map[string]any{"pattern": "**/*.go"}, proto.Limits{})
	runtime.ReadMemStats(&after)
	mem := after.TotalAlloc - before.TotalAlloc
	if resp.IsError {
		t.Fatal(resp.Text)
	}
	for _, want := range []string{"keep.go\n", "sub/keep.go\n", "[.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]", "searched as if not ignored]"} {
		if !strings.Contains(resp.Text, want) {
			t.Errorf("missing %q in:\n%s", want, resp.Text)
		}
	}
	if mem > 64<<20 {
		t.Errorf("glob allocated %d MiB under a hostile .gitignore", mem>>20)
	}

	// Many short rules: those past the rule bound are not applied.
	rules.Reset()
	for i := range 2 * maxIgnoreFileRules {
		rules.WriteString("*" + strconv.Itoa(i) + "?\n")
	}
	rules.WriteString("keep.go\n")
	fsys[".gitignore"] = file(rules.String())
	resp = call(t, fsys, proto.Glob, map[string]any{"pattern": "**/*.go"}, proto.Limits{})
	if !strings.HasPrefix(resp.Text, "keep.go\n") || !strings.Contains(resp.Text, "[10001 rules of .gitignore were not applied (too many or too long ignore rules)]") {
		t.Errorf("got:\n%s", resp.Text)
	}
}

// A rule that takes too many steps is dropped with a note, and the
// search goes on.
func TestCostlyIgnoreRule(t *testing.T) {
	deep := strings.Repeat("a/", 60) + "b"
	fsys := fstest.MapFS{
		".gitignore": file("**/**/**/**/**/**/**/**/**/[c]/b\n"),
		deep:         file("x\n"),
	}
	resp := call(t, fsys, proto.Glob, map[string]any{"pattern": "**/b"}, proto.Limits{})
	if !strings.Contains(resp.Text, deep+"\n") || !strings.Contains(resp.Text, "is too costly to match and was not applied") {
		t.Errorf("got:\n%s", resp.Text)
	}
}

// A folder the walk cannot read for a reason other than the deny-list is
// named in a note: the model learns what was not searched.
func TestWalkNotesUnreadableFolders(t *testing.T) {
	fsys := treeFS()
	fsys.errs["zz/deep"] = syscall.ENAMETOOLONG
	fsys.errs["src"] = syscall.EACCES
	resp := call(t, fsys, proto.Glob, map[string]any{"pattern": "zz/**"}, proto.Limits{})
	want := "zz/deep/\n[not searched: the contents of zz/deep (its path is longer than the file system allows)]"
	if resp.Text != want {
		t.Errorf("got:\n%s\nwant:\n%s", resp.Text, want)
	}
	if strings.Contains(resp.Text, "src") {
		t.Errorf("a folder the deny-list refused was noted:\n%s", resp.Text)
	}
	// A folder the file system refuses (its mode, not the policy) is noted
	// by glob and grep alike, and a file it refuses by grep.
	fsys.MapFS["zz/mode/a.txt"] = file("a\n")
	fsys.MapFS["zz/locked.txt"] = file("a\n")
	fsys.errs["zz/mode"] = proto.ErrnoOSDenied
	fsys.errs["zz/locked.txt"] = proto.ErrnoOSDenied
	resp = call(t, fsys, proto.Glob, map[string]any{"pattern": "zz/**/*.txt"}, proto.Limits{})
	notDir := "[not searched: the contents of zz/mode (permission denied by the file system)]"
	if want := "zz/locked.txt\n[not searched: the contents of zz/deep (its path is longer than the file system allows)]\n" + notDir; resp.Text != want {
		t.Errorf("glob, got:\n%s\nwant:\n%s", resp.Text, want)
	}
	resp = call(t, fsys, proto.Grep, map[string]any{"pattern": "a", "path": "zz"}, proto.Limits{})
	if !strings.Contains(resp.Text, notDir) || !strings.Contains(resp.Text, "[not searched: zz/locked.txt (permission denied by the file system)]") {
		t.Errorf("grep, got:\n%s", resp.Text)
	}
}

// Names that could forge a line are quoted in every listing, and the
// decoded name reads the file. (fstest.MapFS cannot open a name that is not
// UTF-8, so grep does not see "bad\xffname.txt" here; the real file system
// can.)
func TestForgingNamesAreQuoted(t *testing.T) {
	forged := "a\nforged.txt"
	fsys := fstest.MapFS{
		forged:              file("secret line\n"),
		"ok.txt":            file("secret line\n"),
		"d\u2028x/b.txt":    file("secret line\n"),
		"bad\xffname.txt":   file("secret line\n"),
		`"quoted".txt`:      file("secret line\n"),
		"tab\there/c.txt":   file("secret line\n"),
		"한국어.txt":           file("secret line\n"),
		"link\x1b[31m":      link("ok.txt\nforged"),
		"sp ace and-dash.t": file("secret line\n"),
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{proto.ListDir, map[string]any{"path": "."}, `"\"quoted\".txt"` + "\n" + `"a\nforged.txt"` + "\n" + `"bad\xffname.txt"` + "\n" +
			`"d\u2028x/"` + "\n" + `"link\x1b[31m" -> "ok.txt\nforged"` + "\nok.txt\nsp ace and-dash.t\n" + `"tab\there/"` + "\n한국어.txt"},
		{proto.Glob, map[string]any{"pattern": "**/*.txt"}, `"\"quoted\".txt"` + "\n" + `"a\nforged.txt"` + "\n" + `"bad\xffname.txt"` + "\n" +
			`"d\u2028x/b.txt"` + "\nok.txt\n" + `"tab\there/c.txt"` + "\n한국어.txt"},
		{proto.Grep, map[string]any{"pattern": "secret"}, `"\"quoted\".txt":1: secret line` + "\n" + `"a\nforged.txt":1: secret line` + "\n" +
			`"d\u2028x/b.txt":1: secret line` + "\nok.txt:1: secret line\nsp ace and-dash.t:1: secret line\n" +
			`"tab\there/c.txt":1: secret line` + "\n한국어.txt:1: secret line"},
		{proto.ReadFile, map[string]any{"path": forged}, "secret line"},
	} {
		resp := call(t, fsys, c.tool, c.args, proto.Limits{})
		got := resp.Text
		if c.tool == proto.ReadFile {
			got, _, _ = strings.Cut(got, "\n")
		}
		if got != c.want {
			t.Errorf("%s %v:\ngot:\n%s\nwant:\n%s", c.tool, c.args, got, c.want)
		}
	}
}

func TestQuotePath(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path.go": "plain/path.go", "a b": "a b", "ünï/cödé": "ünï/cödé", `back\slash`: `back\slash`,
		"a\nb": `"a\nb"`, "\x00": `"\x00"`, "a\x7f": `"a\x7f"`, "\u0085": `"\u0085"`, "\u202e": `"\u202e"`,
		"\xc3": `"\xc3"`, `"x"`: `"\"x\""`, `x"`: `x"`, "\u00a0": `"\u00a0"`,
	} {
		if got := quotePath(in); got != want {
			t.Errorf("quotePath(%q) = %s, want %s", in, got, want)
		}
		if got := quotePath(in); got != in {
			if u, err := strconv.Unquote(got); err != nil || u != in {
				t.Errorf("quotePath(%q) = %s does not unquote back: %q %v", in, got, u, err)
			}
		}
	}
}

// A path too long to show is cut in the middle, with its depth.
func TestWalkNotesLongPath(t *testing.T) {
	var n walkNotes
	p := strings.Repeat("d/", 2047) + "d"
	n.unreadable(p, &fs.PathError{Op: "readdir", Path: p, Err: syscall.ENAMETOOLONG})
	var b strings.Builder
	n.write(&b)
	want := "[not searched: the contents of " + strings.Repeat("d/", 40) + "…" + strings.Repeat("/d", 40) + ", 2048 levels deep (its path is longer than the file system allows)]\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

// TestWalkDirIsFSWalkDir: walkDir visits what fs.WalkDir visits, with the
// same paths, errors and skips, from a clean root and from one that is not.
func TestWalkDirIsFSWalkDir(t *testing.T) {
	fsys := fstest.MapFS{
		"a/b/c.txt": {Data: []byte("x")}, "a/b/d/e.txt": {}, "a/f.txt": {}, "g/h.txt": {},
		"g/skip/i.txt": {}, "g/stop/j.txt": {}, "g/zz.txt": {}, "top.txt": {},
	}
	for _, root := range []string{".", "a", "a/b", "g", "./a", "a/", "missing"} {
		visit := func(out *[]string) fs.WalkDirFunc {
			return func(p string, d fs.DirEntry, err error) error {
				*out = append(*out, fmt.Sprint(p, d != nil && d.IsDir(), err != nil))
				switch path.Base(p) {
				case "skip":
					return fs.SkipDir
				case "h.txt":
					return fs.SkipDir // a file's SkipDir skips the rest of its folder
				case "stop":
					return fs.SkipAll
				}
				return nil
			}
		}
		var got, want []string
		gerr := walkDir(fsys, root, walkOptions{}, visit(&got))
		werr := fs.WalkDir(fsys, root, visit(&want))
		if fmt.Sprint(got, gerr) != fmt.Sprint(want, werr) {
			t.Errorf("root %q:\nwalkDir    %v %v\nfs.WalkDir %v %v", root, got, gerr, want, werr)
		}
	}
}

// TestWalkAnyOrder: with anyOrder, the walk visits what fs.WalkDir visits
// (less the files skip passes over), each folder's files before its
// folders, and the folders in name order.
func TestWalkAnyOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"a/b/c.txt": {}, "a/b/d/e.go": {}, "a/f.go": {}, "g/h.txt": {}, "g/a/x.go": {},
		"g/zz.go": {}, "top.txt": {}, "z/y.go": {}, "m.go": {},
	}
	skip := func(name string) bool { return !strings.HasSuffix(name, ".go") }
	var got, want []string
	err := walkDir(fsys, ".", walkOptions{anyOrder: true, skipIn: skipAll(skip)}, func(p string, d fs.DirEntry, err error) error {
		got = append(got, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() || !skip(path.Base(p)) {
			want = append(want, p)
		}
		return nil
	})
	// Folders in name order, each after the files of its parent.
	wantOrder := []string{".", "m.go", "a", "a/f.go", "a/b", "a/b/d", "a/b/d/e.go", "g", "g/zz.go", "g/a", "g/a/x.go", "z", "z/y.go"}
	if fmt.Sprint(got) != fmt.Sprint(wantOrder) {
		t.Errorf("order %v\nwant  %v", got, wantOrder)
	}
	slices.Sort(got)
	slices.Sort(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("visited %v\nfs.WalkDir %v", got, want)
	}
}

// Every name as the tools show it (quotePath) reads back, through
// proto.PathName, as the name itself: the rule the model relies on to pass
// a shown name back to any tool.
func FuzzShownNameRoundTrips(f *testing.F) {
	for _, s := range []string{"a\\b.txt", "bad\xffname.txt", "a\nforged.txt", `"quoted".txt`, `"x"`, "d\u2028x", "del\x7f", `\`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got := proto.PathName(quotePath(name)); got != name {
			t.Fatalf("shown as %s, read back as %q, not %q", quotePath(name), got, name)
		}
	})
}

// statCounter is a file system that counts the looks (Stat, Open) at
// files named .gitignore.
type statCounter struct {
	fs.FS
	looks *int
}

func (s statCounter) Open(name string) (fs.File, error) {
	if path.Base(name) == ignoreFileName {
		*s.looks++
	}
	return s.FS.Open(name)
}

func (s statCounter) Stat(name string) (fs.FileInfo, error) {
	if path.Base(name) == ignoreFileName {
		*s.looks++
	}
	return fs.Stat(s.FS, name)
}

// skipCounter is a statCounter whose listings leave out the files a walk
// skips, as wasifs.FS's do (ReadDirSkip, ReadDirAnyOrder).
type skipCounter struct{ statCounter }

func (s skipCounter) ReadDirSkip(name string, skip func(string) bool) ([]fs.DirEntry, error) {
	return s.FS.(interface {
		ReadDirSkip(string, func(string) bool) ([]fs.DirEntry, error)
	}).ReadDirSkip(name, skip)
}

func (s skipCounter) ReadDirAnyOrder(name string, skip func(string) bool) ([]fs.DirEntry, error) {
	return s.FS.(interface {
		ReadDirAnyOrder(string, func(string) bool) ([]fs.DirEntry, error)
	}).ReadDirAnyOrder(name, skip)
}

// TestWalkIgnoreFilesFromListings: a folder's .gitignore applies though
// the walk's skipIn would leave the file itself out (a glob of "*.go", a
// shard's hash), in either order of walk and whether or not the file
// system leaves skipped names out of its listings, and the file itself
// is still passed over; a folder whose listing holds none is never
// looked in for one.
func TestWalkIgnoreFilesFromListings(t *testing.T) {
	root := t.TempDir()
	for name, data := range map[string]string{
		".gitignore":          "gen.go\n",
		"gen.go":              "",
		"a/.gitignore":        "/skip.go\nsub/deep.go\n",
		"a/skip.go":           "",
		"a/keep.go":           "",
		"a/sub/deep.go":       "",
		"a/sub/ok.go":         "",
		"b/c/d/e.go":          "",
		"b/c/.GITIGNORE.txt":  "",
		"z/gen.go":            "",
		"z/nested/.gitignore": "*.go\n",
		"z/nested/n.go":       "",
	} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(root, name), []byte(data), 0o644)
	}
	want := []string{"a/keep.go", "a/sub/ok.go", "b/c/d/e.go"}
	goOnly := func(name string) bool { return !strings.HasSuffix(name, ".go") }
	for _, base := range []fs.FS{os.DirFS(root), wasifs.New(root)} {
		for _, anyOrder := range []bool{false, true} {
			looks := 0
			var fsys fs.FS = statCounter{base, &looks}
			if _, ok := base.(*wasifs.FS); ok {
				fsys = skipCounter{statCounter{base, &looks}}
			}
			var got []string
			opts := walkOptions{anyOrder: anyOrder, skipIn: skipAll(goOnly)}
			err := walkTreeWith(fsys, ".", opts, nil, nil, func(p string, d fs.DirEntry) error {
				if !d.IsDir() {
					got = append(got, p)
				}
				return nil
			})
			slices.Sort(got)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%T anyOrder %v: %v %v, want %v", base, anyOrder, got, err, want)
			}
			// ".", a and z/nested hold one: a stat and an open each.
			if looks != 6 {
				t.Errorf("%T anyOrder %v: %d looks at .gitignore files, want 6 (3 folders hold one, 5 do not)", base, anyOrder, looks)
			}
		}
	}
}
