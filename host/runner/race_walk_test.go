package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine/confinetest"
)

// TestRaceFolderRenamedMidWalk swaps a folder of the tree between the real
// folder and a symlink to an outside tree with the same shape, and renames
// one of its subfolders out of the root and back, while grep and glob walk
// it. The outside tree's names and contents carry the secret: no call may
// ever show either, every call must come back as a result (no runner
// error, no crash), and the walks must also see the inside state, so the
// race really ran both ways. Bounded by a count of calls, not by time.
// (Run with confine.Unconfined instead, the same test shows outside names
// within a few calls: the swap is a real escape without the resolvers.)
func TestRaceFolderRenamedMidWalk(t *testing.T) {
	const calls = 150
	for _, k := range kinds() {
		t.Run(k.String(), func(t *testing.T) {
			layout := []string{"ROOT/tree/", "outside/tree/", "outside/parked/"}
			for i := range 4 {
				layout = append(layout,
					fmt.Sprintf("ROOT/tree/sub%d/", i),
					fmt.Sprintf("ROOT/tree/sub%d/f%d.txt: inside %d", i, i, i),
					fmt.Sprintf("outside/tree/sub%d/", i),
					fmt.Sprintf("outside/tree/sub%d/%s-%d.txt: %s", i, confinetest.Secret, i, confinetest.Secret))
			}
			root := confinetest.Build(t, confinetest.Case{Layout: layout})
			base := filepath.Dir(root)
			r := newRunner(t, root, k)

			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				tree := filepath.Join(root, "tree")
				real := filepath.Join(root, "tree.real")
				sub := filepath.Join(root, "tree", "sub2")
				parked := filepath.Join(base, "outside", "parked", "sub2")
				for i := 0; !stop.Load(); i++ {
					if i%2 == 0 {
						// tree -> symlink to the outside tree, then back.
						if os.Rename(tree, real) == nil {
							os.Symlink("../outside/tree", tree)
							os.Remove(tree)
							os.Rename(real, tree)
						}
					} else {
						// A subfolder leaves the root (a rename across the
						// root's edge) while it may be open, then returns.
						if os.Rename(sub, parked) == nil {
							os.Rename(parked, sub)
						}
					}
				}
			}()
			defer func() { stop.Store(true); wg.Wait() }()

			sawInside := 0
			for n := range calls {
				for _, c := range []struct {
					tool string
					args any
				}{
					{proto.Grep, map[string]any{"pattern": "inside|MOAT", "path": "tree"}},
					{proto.Grep, map[string]any{"pattern": "MOAT"}},
					{proto.Glob, map[string]any{"pattern": "**"}},
					{proto.Glob, map[string]any{"pattern": "**/*.txt", "path": "tree"}},
				} {
					got := call(t, r, c.tool, c.args).Text // call fails the test on a runner error
					if strings.Contains(got, confinetest.Secret) {
						t.Fatalf("%s on try %d showed outside names or content:\n%s", c.tool, n, got)
					}
					if strings.Contains(got, "f1.txt") {
						sawInside++
					}
				}
			}
			if sawInside == 0 {
				t.Fatalf("no walk of %d saw the inside tree: the race never ran both ways", calls)
			}
		})
	}
}
