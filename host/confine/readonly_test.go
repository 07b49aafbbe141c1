package confine_test

import (
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
)

// TestMountIsReadOnly: the guest's only filesystem cannot change the disk,
// so no write reaches it except through the approval gate. Every write
// flag and every mutating operation of wazero's sys.FS fails, with each
// resolver, and the tree is exactly as it was afterwards.
func TestMountIsReadOnly(t *testing.T) {
	for _, k := range append(resolvers(t), confine.Unconfined) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{"ROOT/a.txt: keep", "ROOT/d/"}})
			before := tree(t, filepath.Dir(root))
			m, ctl := newFS(t, root, k).Mount()
			defer ctl.Revoke()
			for _, fl := range []experimentalsys.Oflag{
				experimentalsys.O_WRONLY, experimentalsys.O_RDWR, experimentalsys.O_CREAT | experimentalsys.O_EXCL,
				experimentalsys.O_TRUNC, experimentalsys.O_APPEND, experimentalsys.O_RDONLY | experimentalsys.O_CREAT,
			} {
				for _, p := range []string{"a.txt", "new.txt", "d/new.txt", "../outside/new"} {
					if f, errno := m.OpenFile(p, fl, 0o644); errno == 0 {
						f.Close()
						t.Errorf("OpenFile(%q, %#x) succeeded", p, fl)
					}
				}
			}
			for name, errno := range map[string]experimentalsys.Errno{
				"mkdir":   m.Mkdir("x", 0o755),
				"rmdir":   m.Rmdir("d"),
				"unlink":  m.Unlink("a.txt"),
				"rename":  m.Rename("a.txt", "b.txt"),
				"link":    m.Link("a.txt", "c.txt"),
				"symlink": m.Symlink("../outside/secret", "s"),
				"chmod":   m.Chmod("a.txt", 0o777),
				"utimens": m.Utimens("a.txt", 0, 0),
			} {
				if errno == 0 {
					t.Errorf("%s succeeded on the guest's mount", name)
				}
			}
			if after := tree(t, filepath.Dir(root)); after != before {
				t.Fatalf("the tree changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// tree describes every path under dir with its mode and modification time.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var s string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		s += p[len(dir):] + " " + fi.Mode().String() + " " + fi.ModTime().String() + ";"
		return nil
	})
	return s
}
