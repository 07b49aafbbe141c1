package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/fanout"
)

// TestObserveThroughGuest: a call whose context carries an observer is
// told of every file the real guest opened (grep's, through the batch
// read and its own opens, split over the instances) and every folder it
// listed, though no read_file named them; a call without one leaves the
// observer alone.
func TestObserveThroughGuest(t *testing.T) {
	root := t.TempDir()
	for name, data := range map[string]string{"notes.txt": "buy bread\n", "src/main.go": "// TODO: milk\n", "src/deep/util.go": "// milk\n", ".env": "MILK=1\n"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range kinds() {
		t.Run(k.String(), func(t *testing.T) {
			r := newRunner(t, root, k)
			ex := fanout.New(r, 2)
			var seen confine.Touches
			args, _ := json.Marshal(map[string]any{"pattern": "milk"})
			resp, err := ex.Exec(confine.WithObserver(context.Background(), &seen), proto.Request{ID: 1, Tool: proto.Grep, Args: args})
			if err != nil || resp.IsError {
				t.Fatalf("grep: %v %q", err, resp.Text)
			}
			got := map[string]confine.TouchKind{}
			for _, tc := range seen.List() {
				got[tc.Path] = tc.Kind
			}
			for p, want := range map[string]confine.TouchKind{"notes.txt": confine.Opened, "src/main.go": confine.Opened, "src/deep/util.go": confine.Opened, ".": confine.Listed, "src": confine.Listed, "src/deep": confine.Listed} {
				if got[p]&want == 0 {
					t.Errorf("%s: touched %v, want %v (all: %v)", p, got[p], want, got)
				}
			}
			if _, ok := got[".env"]; ok {
				t.Errorf("a denied file was noted: %v", got)
			}
			n := len(seen.List())
			call(t, r, proto.ReadFile, map[string]any{"path": "notes.txt"})
			if len(seen.List()) != n {
				t.Errorf("a call without the observer was noted")
			}
		})
	}
}

// TestObserverNotClearedByThePreviousCall: calls in turn on the same
// instances, each with its own observer, each told of the file it read.
// The observer of a call must be cleared before its instance is idle
// again: cleared after, it would undo the next call's, which may already
// have taken the instance and set its own.
func TestObserverNotClearedByThePreviousCall(t *testing.T) {
	root := t.TempDir()
	const files = 8
	for i := range files {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := newRunner(t, root, confine.Auto)
	var wg sync.WaitGroup
	errs := make(chan error, 4*50)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				name := fmt.Sprintf("f%d.txt", (g+i)%files)
				var seen confine.Touches
				args, _ := json.Marshal(map[string]any{"path": name})
				resp, err := r.Exec(confine.WithObserver(context.Background(), &seen), proto.Request{ID: 1, Tool: proto.ReadFile, Args: args})
				if err != nil || resp.IsError {
					errs <- fmt.Errorf("read_file %s: %v %q", name, err, resp.Text)
					return
				}
				found := false
				for _, tc := range seen.List() {
					found = found || tc.Path == name && tc.Kind&confine.Opened != 0
				}
				if !found {
					errs <- fmt.Errorf("call %d of goroutine %d: %s read but not noted (noted: %v)", i, g, name, seen.List())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
