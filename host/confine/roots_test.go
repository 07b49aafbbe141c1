package confine_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
	"github.com/moatdev/moat/host/policy"
)

// newRoots opens the sandbox of dirs with resolver k, labelled by
// confine.Labels.
func newRoots(t *testing.T, k confine.Kind, dirs ...string) *confine.FS {
	t.Helper()
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := confine.NewRoots(confinetest.Dirs(t, dirs), k, pol)
	if err != nil {
		t.Fatal(err)
	}
	if k == confine.Openat2 && f.Kind() != confine.Openat2 {
		t.Skipf("openat2 unavailable here (fell back to %v)", f.Kind())
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestEscapeTableTwoRoots runs every case of the escape table with a
// second root beside ROOT, whose files hold the secret: a case named
// under ROOT, ".." paths and links into OTHER included, must neither
// leak nor read. Each order of the roots, each resolver, and the
// unconfined control.
func TestEscapeTableTwoRoots(t *testing.T) {
	for _, c := range confinetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			for _, otherFirst := range []bool{false, true} {
				for _, k := range resolvers(t) {
					t.Run(k.String()+order(otherFirst), func(t *testing.T) {
						roots := confinetest.BuildTwo(t, c, otherFirst)
						got, err := readVia(newRoots(t, k, roots...), confinetest.TwoRootName(c))
						judge(t, c, got, err)
					})
				}
				t.Run("control_unconfined"+order(otherFirst), func(t *testing.T) {
					roots := confinetest.BuildTwo(t, c, otherFirst)
					got, _ := readVia(newRoots(t, confine.Unconfined, roots...), confinetest.TwoRootName(c))
					if c.Escapes && !strings.Contains(got, confinetest.Secret) {
						t.Fatalf("control: without confinement %s should leak, got %q", c.Open, got)
					}
				})
			}
		})
	}
}

func order(otherFirst bool) string {
	if otherFirst {
		return "_other_first"
	}
	return ""
}

// TestTopFolder: the top of several roots lists their labels and
// nothing else, describes itself as a read-only folder, holds no file,
// and cannot be written, linked or renamed; "..", a name that is no
// label and a link above a root are refused.
func TestTopFolder(t *testing.T) {
	for _, k := range resolvers(t) {
		base := t.TempDir()
		a, b := filepath.Join(base, "x", "src"), filepath.Join(base, "y", "src")
		for _, d := range []string{a, b} {
			writeTree(t, d, "f.txt", "in "+d)
		}
		f := newRoots(t, k, a, b)
		if got := f.Labels(); !slices.Equal(got, []string{"src", "src-2"}) {
			t.Fatalf("labels %v", got)
		}
		ents, err := fs.ReadDir(f, ".")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() {
				t.Errorf("%s is not a folder", e.Name())
			}
			names = append(names, e.Name())
		}
		if strings.Join(names, ",") != "src,src-2" {
			t.Errorf("top lists %v", names)
		}
		if fi, err := f.Stat("."); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o222 != 0 || fi.ModTime().Unix() != 0 {
			t.Errorf("Stat(.) = %v, %v", fi, err)
		}
		for name, want := range map[string]string{"src/f.txt": "in " + a, "src-2/f.txt": "in " + b, "./src-2//f.txt": "in " + b} {
			if got, err := fs.ReadFile(f, name); err != nil || string(got) != want {
				t.Errorf("%s = %q, %v; want %q", name, got, err, want)
			}
		}
		for name, want := range map[string]error{"..": confine.ErrEscape, "../x/src/f.txt": confine.ErrEscape, "src/../src-2/f.txt": confine.ErrEscape,
			"nothing": fs.ErrNotExist, "f.txt": fs.ErrNotExist} {
			if _, err := f.Open(name); !errors.Is(err, want) {
				t.Errorf("Open(%q) = %v, want %v", name, err, want)
			}
		}
		m, ctl := f.Mount()
		for _, p := range []string{"new", "src", "src/new"} {
			if file, errno := m.OpenFile(p, experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644); errno == 0 {
				file.Close()
				t.Errorf("OpenFile(%s) for writing succeeded", p)
			}
		}
		for name, errno := range map[string]experimentalsys.Errno{
			"mkdir": m.Mkdir("x", 0o755), "rmdir": m.Rmdir("src"), "rename": m.Rename("src", "other"),
			"link": m.Link("src/f.txt", "f.txt"), "symlink": m.Symlink("src", "s"), "chmod": m.Chmod(".", 0o777),
		} {
			if errno == 0 {
				t.Errorf("%s succeeded on the top folder", name)
			}
		}
		if _, errno := m.Readlink("src"); errno == 0 {
			t.Errorf("Readlink(src) succeeded")
		}
		// The batch read of the top reads nothing (the guest's own
		// opens say why); of a root, its files.
		buf, sizes := make([]byte, 256), make([]int32, 1)
		if ctl.ReadFiles(".", []string{"src"}, buf, sizes); sizes[0] >= 0 {
			t.Errorf("batch read of the top read %q", buf[:sizes[0]])
		}
		if ctl.ReadFiles("src-2", []string{"f.txt"}, buf, sizes); sizes[0] < 0 || string(buf[:sizes[0]]) != "in "+b {
			t.Errorf("batch read of src-2/f.txt: %d", sizes[0])
		}
		ctl.Revoke()
	}
}

// TestDenyPerRoot: the deny-list judges each root's paths relative to
// that root, and a root's own name is never judged.
func TestDenyPerRoot(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, ".ssh")
	writeTree(t, a, "ok.txt", "fine")
	writeTree(t, b, ".env", confinetest.Secret)
	writeTree(t, b, "notes.txt", "notes")
	pol, err := policy.New([]string{"ok.txt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := confine.NewRoots([]confine.Dir{{Label: "a", Path: a}, {Label: ".ssh", Path: b}}, confine.Auto, pol)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, want := range map[string]error{"a/ok.txt": confine.ErrDenied, ".ssh/.env": confine.ErrDenied} {
		if _, err := f.Open(name); !errors.Is(err, want) {
			t.Errorf("Open(%q) = %v, want %v", name, err, want)
		}
	}
	if got, err := fs.ReadFile(f, ".ssh/notes.txt"); err != nil || string(got) != "notes" {
		t.Errorf(".ssh/notes.txt = %q, %v", got, err)
	}
	ents, _ := fs.ReadDir(f, ".ssh")
	if len(ents) != 1 || ents[0].Name() != "notes.txt" {
		t.Errorf(".ssh lists %v", ents)
	}
}

func TestLabelsAndDisjoint(t *testing.T) {
	got, err := confine.Labels([]string{"/w/src", "/v/src", "/u/src", "/w/lib", "/w/Lib"})
	if err != nil || !slices.Equal(got, []string{"src", "src-2", "src-3", "lib", "Lib-2"}) {
		t.Errorf("Labels = %v, %v", got, err)
	}
	if runtime.GOOS != "windows" {
		if _, err := confine.Labels([]string{"/w/a", "/"}); err == nil {
			t.Errorf("Labels of / has no error")
		}
	}
	// The same folder by another spelling (as a bind mount or a
	// case-insensitive disk gives one) is the same folder.
	d := t.TempDir()
	if err := confine.Disjoint([]string{d, d + "/."}); err == nil {
		t.Errorf("Disjoint of a folder and itself by another spelling: no error")
	}
	for _, c := range []struct {
		roots []string
		ok    bool
	}{
		{[]string{"/w/a", "/w/b"}, true},
		{[]string{"/w/a", "/w/ab"}, true},
		{[]string{"/w/a", "/w/a"}, false},
		{[]string{"/w/a", "/w/a/b"}, false},
		{[]string{"/w/a/b", "/w"}, false},
	} {
		var abs []string
		for _, r := range c.roots {
			abs = append(abs, filepath.FromSlash(r))
		}
		if err := confine.Disjoint(abs); (err == nil) != c.ok {
			t.Errorf("Disjoint(%v) = %v", c.roots, err)
		}
	}
}

// writeTree writes dir/name (and dir) with content.
func writeTree(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzTwoRoots: whatever name the guest gives a sandbox of two roots
// (each holding links into the other and out of both), what it reads is
// never the secret beside them, nor a file of one root through the
// other's name.
func FuzzTwoRoots(f *testing.F) {
	for _, c := range confinetest.Cases() {
		f.Add(confinetest.TwoRootName(c))
	}
	for _, s := range []string{".", "ROOT", "OTHER/x", "ROOT/../OTHER/x", "ROOT/up/OTHER/x", "/ROOT/l", "ROOT//l", "./ROOT/./dl/x", "..", "OTHER/../..", "ROOT\\..\\OTHER\\x"} {
		f.Add(s)
	}
	base := f.TempDir()
	layout := map[string]string{
		"ROOT/ok.txt":   "fine",
		"OTHER/x":       "MOAT-OTHER-ROOT",
		"outside/s.txt": confinetest.Secret,
	}
	for p, content := range layout {
		full := filepath.Join(base, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"ROOT/l": "../OTHER/x", "ROOT/dl": "../OTHER", "ROOT/up": "..", "ROOT/abs": filepath.Join(base, "OTHER", "x"),
		"ROOT/out": "../outside/s.txt", "OTHER/back": "../ROOT/ok.txt", "OTHER/here": ".",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			f.Skipf("no symlinks: %v", err)
		}
	}
	pol, err := policy.New(nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	fsys, err := confine.NewRoots([]confine.Dir{{Label: "ROOT", Path: filepath.Join(base, "ROOT")}, {Label: "OTHER", Path: filepath.Join(base, "OTHER")}}, confine.Auto, pol)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, _ := readVia(fsys, name)
		if strings.Contains(got, confinetest.Secret) {
			t.Fatalf("%q read the secret outside both roots: %q", name, got)
		}
		if strings.Contains(got, "MOAT-OTHER-ROOT") && !strings.HasPrefix(strings.TrimLeft(name, "./"), "OTHER/") {
			t.Fatalf("%q read OTHER's file under another name: %q", name, got)
		}
		if strings.Contains(got, "fine") && strings.HasPrefix(strings.TrimLeft(name, "./"), "OTHER/") {
			t.Fatalf("%q read ROOT's file through OTHER: %q", name, got)
		}
	})
}
