//go:build unix

package confine_test

import (
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
)

// TestOSPermissionIsNotPolicy: a file or folder the operating system
// refuses (mode 000) reaches the guest as proto.ErrnoOSDenied, never as
// the deny-list's EACCES nor as the escape's EPERM, and the deny-list's
// refusals keep theirs. As root the permission checks are made to hold by
// stepping down to an ordinary uid (confinetest.AsUser).
func TestOSPermissionIsNotPolicy(t *testing.T) {
	osDenied := experimentalsys.UnwrapOSError(proto.ErrnoOSDenied)
	policyDenied := experimentalsys.UnwrapOSError(proto.ErrnoDenied)
	escape := experimentalsys.UnwrapOSError(proto.ErrnoEscape)
	if osDenied == policyDenied || osDenied == escape || osDenied == experimentalsys.EIO {
		t.Fatalf("ErrnoOSDenied reaches the guest as %v, which has another meaning", osDenied)
	}
	for _, k := range append(resolvers(t), confine.Unconfined) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/locked: x", "ROOT/closed/", "ROOT/closed/inner: x", "ROOT/open.txt: x", "ROOT/out => ../outside/secret"}})
			// The root and the folders above it (the unconfined control
			// walks from /) open to the user, locked and closed shut.
			for p, mode := range map[string]os.FileMode{"locked": 0, "closed": 0, ".": 0o755, "..": 0o755, "../..": 0o755} {
				if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { os.Chmod(filepath.Join(root, "closed"), 0o755) }) // so the temp folder can be removed
			m, ctl := newFS(t, root, k).Mount()
			defer ctl.Revoke()
			confinetest.AsUser(t, func() {
				open := func(p string) experimentalsys.Errno {
					f, errno := m.OpenFile(p, experimentalsys.O_RDONLY, 0)
					if errno == 0 {
						f.Close()
					}
					return errno
				}
				_, statInner := m.Stat("closed/inner")
				for what, c := range map[string]struct{ got, want experimentalsys.Errno }{
					"open locked":       {open("locked"), osDenied},
					"open closed":       {open("closed"), osDenied},
					"stat closed/inner": {statInner, osDenied},
					"open closed/inner": {open("closed/inner"), osDenied},
					"open open.txt":     {open("open.txt"), 0},
				} {
					if c.got != c.want {
						t.Errorf("%s: errno %v, want %v", what, c.got, c.want)
					}
				}
				if k == confine.Unconfined {
					return // no deny-list and no confinement: nothing more to tell apart
				}
				if got := open(".env"); got != policyDenied {
					t.Errorf("open .env (the deny-list): errno %v, want %v", got, policyDenied)
				}
				if got := open("out"); got != escape {
					t.Errorf("open out (a link out of the root): errno %v, want %v", got, escape)
				}
			})
		})
	}
}
