package confine_test

import (
	"errors"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
	"github.com/moatdev/moat/host/policy"
)

func resolvers(t *testing.T) []confine.Kind {
	k := []confine.Kind{confine.Root}
	if runtime.GOOS == "linux" {
		k = append(k, confine.Openat2)
	}
	return k
}

func newFS(t *testing.T, root string, k confine.Kind) *confine.FS {
	t.Helper()
	return newRoots(t, k, root) // one root: confine.New of it
}

// readVia tries every read path of the view and returns all it produced.
func readVia(f *confine.FS, p string) (string, error) {
	var out strings.Builder
	var firstErr error
	note := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	if file, err := f.Open(p); err == nil {
		b, _ := io.ReadAll(file.(io.Reader))
		out.Write(b)
		if d, ok := file.(fs.ReadDirFile); ok {
			ents, _ := d.ReadDir(-1)
			for _, e := range ents {
				out.WriteString(" " + e.Name())
			}
		}
		file.Close()
	} else {
		note(err)
	}
	if _, err := f.Stat(p); err != nil {
		note(err)
	}
	if t, err := f.ReadLink(p); err == nil {
		out.WriteString(" -> " + t)
	}
	// A batch read of p in its folder (the guest's moat.read_files).
	_, ctl := f.Mount()
	defer ctl.Revoke()
	buf, sizes := make([]byte, 4096), make([]int32, 1)
	// The folder as named, not cleaned: "ROOT/../OTHER" is not OTHER.
	dir, base := ".", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, base = p[:i], p[i+1:]
	}
	if n := ctl.ReadFiles(dir, []string{base}, buf, sizes); n == 1 && sizes[0] >= 0 {
		out.WriteString(" batch: " + string(buf[:sizes[0]]))
	}
	return out.String(), firstErr
}

// judge fails a case whose reads (readVia's got and err) leaked the
// secret, missed the inside content, or did not fail.
func judge(t *testing.T, c confinetest.Case, got string, err error) {
	t.Helper()
	if strings.Contains(got, confinetest.Secret) {
		t.Fatalf("%s leaked the secret: %q", c.Open, got)
	}
	if c.Inside != "" && !strings.HasPrefix(got, c.Inside) {
		t.Fatalf("inside read of %s = %q, %v; want %q", c.Open, got, err, c.Inside)
	}
	if c.Inside == "" && err == nil {
		t.Fatalf("%s: no error", c.Open)
	}
}

// TestEscapeTable runs every escape case against both resolvers, and the
// unconfined control that shows each case is a real escape without them.
func TestEscapeTable(t *testing.T) {
	for _, c := range confinetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			for _, k := range resolvers(t) {
				t.Run(k.String(), func(t *testing.T) {
					root := confinetest.Build(t, c)
					got, err := readVia(newFS(t, root, k), c.Open)
					judge(t, c, got, err)
				})
			}
			t.Run("control_unconfined", func(t *testing.T) {
				root := confinetest.Build(t, c)
				got, _ := readVia(newFS(t, root, confine.Unconfined), c.Open)
				if c.Escapes && !strings.Contains(got, confinetest.Secret) {
					t.Fatalf("control: without confinement %s should leak, got %q", c.Open, got)
				}
			})
		})
	}
}

func TestErrorsAreClassified(t *testing.T) {
	for _, k := range resolvers(t) {
		root := confinetest.Build(t, confinetest.Case{Layout: []string{
			"ROOT/out => ../outside/secret", "ROOT/x => .env", "ROOT/a => b", "ROOT/b => a", "ROOT/fifo|"}})
		f := newFS(t, root, k)
		for p, want := range map[string]error{
			"out": confine.ErrEscape, "../outside/secret": confine.ErrEscape, "x": confine.ErrDenied,
			".env": confine.ErrDenied, "a": confine.ErrLoop, "nothing": fs.ErrNotExist, "fifo": confine.ErrSpecial,
		} {
			if _, err := f.Open(p); !errors.Is(err, want) {
				t.Errorf("%v: Open(%q) = %v, want %v", k, p, err, want)
			}
		}
		if fi, err := f.Stat("fifo"); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("%v: Stat(fifo) = %v, %v; want a named pipe without opening it", k, fi, err)
		}
		if _, err := f.ReadLink("out"); !errors.Is(err, confine.ErrEscape) {
			t.Errorf("%v: ReadLink(out) = %v, want ErrEscape", k, err)
		}
	}
}

// TestListingHidesDenied: denied names never appear in a folder listing.
func TestListingHidesDenied(t *testing.T) {
	for _, k := range resolvers(t) {
		root := confinetest.Build(t, confinetest.Case{Layout: []string{"ROOT/a.txt", "ROOT/id_rsa: x", "ROOT/environment.md"}})
		ents, err := fs.ReadDir(newFS(t, root, k), ".")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if got := strings.Join(names, ","); got != "a.txt,environment.md" {
			t.Errorf("%v: listing = %s", k, got)
		}
	}
}

// TestRaceRepointedSymlink re-points ROOT/d between an inside folder and an
// outside one while reading d/f: no read may ever return outside content.
func TestRaceRepointedSymlink(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/in/", "ROOT/in/f: inside", "outside/f: " + confinetest.Secret, "ROOT/d => in"}})
			f := newFS(t, root, k)
			stop := confinetest.Repoint(root, "d", "in", "../outside")
			deadline := time.Now().Add(time.Second)
			reads, ok := 0, 0
			for time.Now().Before(deadline) || reads < 2000 {
				reads++
				got, err := readVia(f, "d/f")
				if strings.Contains(got, confinetest.Secret) {
					stop()
					t.Fatalf("read %d leaked outside content", reads)
				}
				if err == nil {
					ok++
				}
			}
			stop()
			if ok == 0 {
				t.Fatalf("no read of d/f succeeded in %d tries: the race never saw the inside state", reads)
			}
			t.Logf("%d reads, %d inside, none outside", reads, ok)
		})
	}
}

func FuzzResolve(f *testing.F) {
	for _, c := range confinetest.Cases() {
		f.Add(c.Open)
	}
	f.Add("a/b/../../..")
	f.Add("d/./../d/../../outside")
	f.Fuzz(func(t *testing.T, p string) {
		root := confinetest.Build(t, confinetest.Case{Layout: []string{
			"ROOT/a/b/", "ROOT/d => a/b", "ROOT/o => ../outside", "ROOT/x => .env", "ROOT/l => d/../../outside/secret"}})
		for _, k := range resolvers(t) {
			pol, _ := policy.New(nil, nil)
			fsys, err := confine.New(root, k, pol)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := readVia(fsys, p)
			fsys.Close()
			if strings.Contains(got, confinetest.Secret) {
				t.Fatalf("%v: %q leaked", k, p)
			}
		}
	})
}
