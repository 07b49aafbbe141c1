package confinetest

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/moatdev/moat/guest/proto"
)

// Repoint keeps re-pointing the symlink root/name between the targets, in
// turn, by atomic rename, until the returned stop is called: the
// check-then-use race of ARCHITECTURE.md's threat classes.
func Repoint(root, name string, targets ...string) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(root, name+".tmp")
		for i := 0; !done.Load(); i++ {
			os.Remove(tmp)
			if os.Symlink(targets[i%len(targets)], tmp) == nil {
				os.Rename(tmp, filepath.Join(root, name))
			}
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}

// Executor is what runs a tool call: the runner in-process, or the
// isolated child (engine.Executor).
type Executor interface {
	Exec(ctx context.Context, req proto.Request) (proto.Response, error)
}

// EveryTool asks every read-only tool about p through ex, including the
// folder around it and the whole tree, and returns all the output, one
// "tool: text" block per call.
func EveryTool(t testing.TB, ex Executor, p string) string {
	t.Helper()
	var out []string
	for i, c := range []struct {
		tool string
		args any
	}{
		{proto.ReadFile, map[string]any{"path": p}},
		{proto.Stat, map[string]any{"path": p}},
		{proto.ListDir, map[string]any{"path": p}},
		{proto.ListDir, map[string]any{"path": path.Dir(p)}},
		{proto.Grep, map[string]any{"pattern": "MOAT|inside|doc|env", "path": p}},
		{proto.Grep, map[string]any{"pattern": "MOAT-SECRET"}},
		{proto.Glob, map[string]any{"pattern": "**", "path": p}},
		{proto.Glob, map[string]any{"pattern": "**/*"}},
	} {
		b, _ := json.Marshal(c.args)
		resp, err := ex.Exec(context.Background(), proto.Request{ID: uint64(i + 1), Tool: c.tool, Args: b})
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, b, err)
		}
		out = append(out, c.tool+": "+resp.Text)
	}
	return strings.Join(out, "\n")
}
