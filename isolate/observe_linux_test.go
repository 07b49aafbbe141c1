package isolate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/runner"
)

// TestObserveThroughChild: a call whose context carries an observer gets
// back, with the child's answer, every file the real guest opened in the
// child and every folder it listed (the grep's, though nothing read them
// by name), relative to the root; a call without one asks for none.
func TestObserveThroughChild(t *testing.T) {
	needUserns(t)
	root := t.TempDir()
	for name, data := range map[string]string{"notes.txt": "bread\n", "src/main.go": "// TODO: milk\n"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	ex := startReal(t, runner.Config{Root: root, CacheDir: testCache(t)})
	var seen confine.Touches
	args, _ := json.Marshal(map[string]string{"pattern": "milk"})
	resp, err := ex.Exec(confine.WithObserver(context.Background(), &seen), proto.Request{ID: 1, Tool: proto.Grep, Args: args})
	if err != nil || resp.Text != "src/main.go:1: // TODO: milk" {
		t.Fatalf("grep: %v %q", err, resp.Text)
	}
	got := map[string]confine.TouchKind{}
	for _, tc := range seen.List() {
		got[tc.Path] = tc.Kind
	}
	for p, want := range map[string]confine.TouchKind{"notes.txt": confine.Opened, "src/main.go": confine.Opened, ".": confine.Listed, "src": confine.Listed} {
		if got[p]&want == 0 {
			t.Errorf("%s: touched %v, want %v (all: %v)", p, got[p], want, got)
		}
	}
	n := len(seen.List())
	call(t, ex, proto.ReadFile, `{"path":"notes.txt"}`)
	if len(seen.List()) != n {
		t.Error("a call without an observer was observed")
	}
}
