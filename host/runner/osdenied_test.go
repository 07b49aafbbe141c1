//go:build unix

package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine/confinetest"
)

// TestOSPermissionThroughGuest: through the real guest, a file and a
// folder of mode 000 are reported as the file system's refusal, never as
// the sandbox policy's, and a walk names the folder (and grep the file)
// it could not search; a denied file still reads as the policy's refusal.
// As root the checks are made to hold by stepping down to an ordinary uid.
func TestOSPermissionThroughGuest(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/locked.txt: hit", "ROOT/closed/", "ROOT/closed/inner.txt: hit", "ROOT/open.txt: hit"}})
			for p, mode := range map[string]os.FileMode{"locked.txt": 0, "closed": 0, ".": 0o755} {
				if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { os.Chmod(filepath.Join(root, "closed"), 0o755) })
			r := newRunner(t, root, k)
			call(t, r, proto.Stat, map[string]any{"path": "."}) // the instance starts before the step down
			const refused = "permission denied by the file system"
			confinetest.AsUser(t, func() {
				for _, c := range []struct {
					tool string
					args map[string]any
					want string
				}{
					{proto.ReadFile, map[string]any{"path": "locked.txt"}, "error: " + refused + ": locked.txt (its mode or owner does not let moat read it)"},
					{proto.ListDir, map[string]any{"path": "closed"}, "error: " + refused + ": closed (its mode or owner does not let moat read it)"},
					{proto.ReadFile, map[string]any{"path": "closed/inner.txt"}, "error: " + refused + ": closed/inner.txt (its mode or owner does not let moat read it)"},
					{proto.ReadFile, map[string]any{"path": ".env"}, "error: access denied by the sandbox policy: .env"},
					{proto.Grep, map[string]any{"pattern": "hit"}, "open.txt:1: hit\n[not searched: the contents of closed (" + refused + ")]\n[not searched: locked.txt (" + refused + ")]"},
					{proto.Glob, map[string]any{"pattern": "**"}, "closed/\nlocked.txt\nopen.txt\n[not searched: the contents of closed (" + refused + ")]"},
				} {
					got := call(t, r, c.tool, c.args).Text
					if got != c.want {
						t.Errorf("%s %v:\n got %q\nwant %q", c.tool, c.args, got, c.want)
					}
					if strings.Contains(got, confinetest.Secret) {
						t.Fatalf("secret leaked: %q", got)
					}
				}
			})
		})
	}
}
