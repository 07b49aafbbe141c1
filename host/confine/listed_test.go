//go:build unix

package confine_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
	"github.com/moatdev/moat/host/policy"
)

// TestListedThenSwapped: a guest's mount opens a file its listing showed
// as regular without the walker's lstat (FS.openListedFile). A file swapped
// after the listing for a FIFO, a symlink out of the root or a symlink
// inside it is answered exactly as the walker answers it: refused, not
// followed out, followed inside. An unswapped file reads as itself, and a
// second open of the same name (no longer listed) still works.
func TestListedThenSwapped(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/d/", "ROOT/d/fifo.txt: a", "ROOT/d/out.txt: b", "ROOT/d/in.txt: c", "ROOT/d/keep.txt: keep",
				"ROOT/d/target.txt: inside",
			}})
			m, ctl := newFS(t, root, k).Mount()
			defer ctl.Revoke()
			dir, errno := m.OpenFile("d", experimentalsys.O_DIRECTORY, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			if _, errno := dir.Readdir(-1); errno != 0 {
				t.Fatal(errno)
			}
			dir.Close()

			d := filepath.Join(root, "d")
			must(t, os.Remove(filepath.Join(d, "fifo.txt")))
			must(t, syscall.Mkfifo(filepath.Join(d, "fifo.txt"), 0o644))
			must(t, os.Remove(filepath.Join(d, "out.txt")))
			must(t, os.Symlink("../../outside/secret", filepath.Join(d, "out.txt")))
			must(t, os.Remove(filepath.Join(d, "in.txt")))
			must(t, os.Symlink("target.txt", filepath.Join(d, "in.txt")))

			for _, c := range []struct {
				name, want string
				errno      experimentalsys.Errno
			}{
				{"d/fifo.txt", "", experimentalsys.UnwrapOSError(proto.ErrnoSpecial)},
				{"d/out.txt", "", experimentalsys.UnwrapOSError(proto.ErrnoEscape)},
				{"d/in.txt", "inside", 0},
				{"d/keep.txt", "keep", 0},
				{"d/keep.txt", "keep", 0},
			} {
				f, errno := m.OpenFile(c.name, experimentalsys.O_RDONLY, 0)
				if errno != c.errno {
					if errno == 0 {
						f.Close()
					}
					t.Errorf("open %s: errno %v, want %v", c.name, errno, c.errno)
					continue
				}
				if errno != 0 {
					continue
				}
				buf := make([]byte, 64)
				n, errno := f.Read(buf)
				f.Close()
				if got := string(buf[:n]); errno != 0 || got != c.want+"\n" && got != c.want {
					t.Errorf("read %s: %q %v, want %q", c.name, got, errno, c.want)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestListedDenied: what the deny-list refuses stays refused after its
// folder was listed, whether a built-in rule refuses the name, a --deny
// rule the path, or a rule the folder above (listed through a folder
// the guest may see): a listed name is opened without asking the policy
// again, so the listing must never hold one.
func TestListedDenied(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/d/", "ROOT/d/.env: SECRET=1", "ROOT/d/id_rsa: key", "ROOT/d/ok.txt: ok", "ROOT/d/no.txt: no",
				"ROOT/d/sub/", "ROOT/d/sub/x.txt: x",
			}})
			pol, err := policy.New([]string{"d/no.txt", "d/sub"}, nil)
			must(t, err)
			f, err := confine.New(root, k, pol)
			must(t, err)
			m, ctl := f.Mount()
			defer ctl.Revoke()
			dir, errno := m.OpenFile("d", experimentalsys.O_DIRECTORY, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			ents, errno := dir.Readdir(-1)
			dir.Close()
			if errno != 0 {
				t.Fatal(errno)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name)
			}
			if len(names) != 1 || names[0] != "ok.txt" {
				t.Fatalf("listing shows %q, want only ok.txt", names)
			}
			for _, name := range []string{"d/.env", "d/id_rsa", "d/no.txt", "d/sub/x.txt", "d/ok.txt"} {
				f, errno := m.OpenFile(name, experimentalsys.O_RDONLY, 0)
				if errno == 0 {
					f.Close()
				}
				want := experimentalsys.UnwrapOSError(proto.ErrnoDenied)
				if name == "d/ok.txt" {
					want = 0
				}
				if errno != want {
					t.Errorf("open %s after listing: errno %v, want %v", name, errno, want)
				}
			}
		})
	}
}
