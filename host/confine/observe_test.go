//go:build unix

package confine_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/moatdev/moat/host/confine"
)

// TestObserve: a mount's observer is told of each regular file opened,
// each folder listed (when it is listed, not when it is opened), each
// path described, and each file the batch read read; never of a denied
// path, nor of a folder opened and not listed; and of nothing once it is
// taken off.
func TestObserve(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := t.TempDir()
			for name, data := range map[string]string{"a.txt": "a", "src/b.go": "b", "src/c.go": "c", ".env": "SECRET", "quiet/d.txt": "d"} {
				p := filepath.Join(root, filepath.FromSlash(name))
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(data), 0o644))
			}
			fsys := newFS(t, root, k)
			m, ctl := fsys.Mount()
			var seen confine.Touches
			ctl.Observe(&seen)

			f, errno := m.OpenFile("/a.txt", experimentalsys.O_RDONLY, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			f.Close()
			d, errno := m.OpenFile("/src", experimentalsys.O_RDONLY, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			if _, errno := d.Readdir(-1); errno != 0 {
				t.Fatal(errno)
			}
			d.Close()
			q, errno := m.OpenFile("/quiet", experimentalsys.O_RDONLY, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			q.Close() // opened, never listed
			if _, errno := m.OpenFile("/.env", experimentalsys.O_RDONLY, 0); errno == 0 {
				t.Fatal("a denied file opened")
			}
			if _, errno := m.Stat("/.env"); errno == 0 {
				t.Fatal("a denied file described")
			}
			if _, errno := m.Lstat("/src/c.go"); errno != 0 {
				t.Fatal(errno)
			}
			sizes, _ := readFiles(t, ctl, "src", []string{"b.go", ".env", "missing"}, 1024)
			if sizes[0] != 1 || sizes[1] != -1 || sizes[2] != -1 {
				t.Fatalf("ReadFiles sizes = %v", sizes)
			}

			want := []confine.Touch{
				{Path: "a.txt", Kind: confine.Opened},
				{Path: "src", Kind: confine.Listed},
				{Path: "src/b.go", Kind: confine.Opened},
				{Path: "src/c.go", Kind: confine.Described},
			}
			if got := seen.List(); !slices.Equal(got, want) {
				t.Fatalf("touched %v, want %v", got, want)
			}

			ctl.Observe(nil)
			f, errno = m.OpenFile("/quiet/d.txt", experimentalsys.O_RDONLY, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			f.Close()
			if got := seen.List(); len(got) != len(want) {
				t.Fatalf("noted after Observe(nil): %v", got)
			}
		})
	}
}
