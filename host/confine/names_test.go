//go:build unix

package confine_test

import (
	"io"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine/confinetest"
)

// TestNamesAsTheKernelReadsThem: on Unix a backslash is part of a name,
// so "a\b.txt" is that file, not "a/b.txt", through a link too; a name that
// is not UTF-8 reaches the mount escaped (proto.WASIPath, since wazero
// refuses such paths) and opens the file. The backslash escapes of the
// shared table (backslash_dotdot, symlink_target_backslash) still fail.
func TestNamesAsTheKernelReadsThem(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				`ROOT/a\b.txt: backslash file`, "ROOT/a/", "ROOT/a/b.txt: slash file", `ROOT/d\x/`, `ROOT/d\x/in.txt: in backslash folder`,
				`ROOT/l => a\b.txt`, "ROOT/bad\xffname.txt: byte name", "ROOT/del\x7fname.txt: del name",
				`ROOT/esc => ..\outside\secret`}})
			f := newFS(t, root, k)
			m, ctl := f.Mount()
			defer ctl.Revoke()
			for p, want := range map[string]string{
				`a\b.txt`: "backslash file", "a/b.txt": "slash file", `d\x/in.txt`: "in backslash folder", "l": "backslash file",
				proto.WASIPath("bad\xffname.txt"): "byte name", proto.WASIPath("del\x7fname.txt"): "del name",
			} {
				file, errno := m.OpenFile(p, experimentalsys.O_RDONLY, 0)
				if errno != 0 {
					t.Errorf("OpenFile(%q): %v", p, errno)
					continue
				}
				buf := make([]byte, 64)
				n, _ := file.Read(buf)
				file.Close()
				if got := string(buf[:n]); got != want {
					t.Errorf("OpenFile(%q) read %q, want %q", p, got, want)
				}
			}
			// On Unix the link's target is a name in its own folder (a
			// dangling link inside the root): nothing is read through it.
			for _, p := range []string{`..\outside\secret`, "esc"} {
				got, err := readVia(f, p)
				if err == nil || strings.Contains(got, confinetest.Secret) {
					t.Errorf("%s: read %q, %v; want an error", p, got, err)
				}
			}
			if _, err := f.Open("bad\xffname.txt"); err != nil {
				t.Errorf("host-side Open of a name that is not UTF-8: %v", err)
			}
			file, _ := f.Open("bad\xffname.txt")
			if file != nil {
				b, _ := io.ReadAll(file.(io.Reader))
				file.Close()
				if string(b) != "byte name" {
					t.Errorf("host-side read %q", b)
				}
			}
		})
	}
}
