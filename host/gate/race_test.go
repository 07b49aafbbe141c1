package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRaceTargetSwappedDuringApproval is the hammer version of
// TestChangedDuringReview (which changes the target once, deterministically,
// between the diff and the answer): here another process keeps swapping
// the target between a regular file, a symlink to a file outside the root,
// a second hard link to that outside file, and nothing, and its folder
// between a real folder and a symlink to an outside folder, while
// proposals are approved with y as fast as they come. Whatever the
// interleaving, nothing outside the root changes and no file appears there,
// and every answer is either a write or a refusal.
//
// A temporary file may be left inside the root when its folder is renamed
// away between the write and the clean-up (the remove then names a path
// that no longer leads to it): litter in the workspace, never a write
// outside it, and only under a concurrent local writer.
func TestRaceTargetSwappedDuringApproval(t *testing.T) {
	const proposals = 200
	f := newFixture(t, strings.Repeat("y\n", proposals))
	outFile := filepath.Join(f.outside, "target")
	if err := os.WriteFile(outFile, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.outside, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write("d/a.txt", "old\n")

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a := filepath.Join(f.root, "d", "a.txt")
		d := filepath.Join(f.root, "d")
		for i := 0; !stop.Load(); i++ {
			switch i % 5 {
			case 0:
				os.Remove(a)
				os.Symlink(outFile, a)
			case 1:
				os.Remove(a)
				os.Link(outFile, a)
			case 2:
				os.Remove(a)
			case 3:
				if os.Rename(d, d+".real") == nil {
					os.Symlink(filepath.Join(f.outside, "dir"), d)
					os.Remove(d)
					os.Rename(d+".real", d)
				}
			default:
				os.Remove(a)
				os.WriteFile(a, []byte("old\n"), 0o644)
			}
		}
	}()

	wrote, refused := 0, 0
	for i := range proposals {
		raw, _ := json.Marshal(write("d/a.txt", fmt.Sprintf("model %d\n", i)))
		res := f.gate.Propose(context.Background(), "propose_write", raw)
		switch {
		case strings.HasPrefix(res.Text, "wrote "):
			wrote++
		case res.IsError && strings.HasPrefix(res.Text, "refused: "):
			refused++
		default:
			stop.Store(true)
			wg.Wait()
			t.Fatalf("proposal %d: unexpected result %+v", i, res)
		}
	}
	stop.Store(true)
	wg.Wait()
	if b, err := os.ReadFile(outFile); err != nil || string(b) != "outside\n" {
		t.Fatalf("the file outside the root changed: %q, %v", b, err)
	}
	ents, err := os.ReadDir(f.outside)
	if err != nil || len(ents) != 2 {
		t.Fatalf("the outside folder holds %v (%v), want only target and dir", ents, err)
	}
	if ents, err := os.ReadDir(filepath.Join(f.outside, "dir")); err != nil || len(ents) != 0 {
		t.Fatalf("something was written into the outside folder: %v, %v", ents, err)
	}
	t.Logf("%d proposals: %d written, %d refused", proposals, wrote, refused)
}
