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
	"github.com/moatdev/moat/host/engine"
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

// EveryTool asks every read-only tool about p through ex (the runner
// in-process, or the isolated child), including the
// folder around it and the whole tree, and returns all the output, one
// "tool: text" block per call, and the [Secret] after an answer that
// describes a file holding it (by its [SecretMode]). The calls come from the tools' attributes
// in proto's registry, so a tool added there is asked too.
func EveryTool(t testing.TB, ex engine.Executor, p string) string {
	t.Helper()
	return EveryToolIn(t, ex, p, "")
}

// EveryToolIn is EveryTool with the whole-tree walks under top instead
// ("" for the whole tree): in the two-root runs, the root ROOT.
func EveryToolIn(t testing.TB, ex engine.Executor, p, top string) string {
	t.Helper()
	var out []string
	id := uint64(0)
	for _, d := range proto.Registry() {
		if d.Is(proto.Writes) || d.Is(proto.Internal) {
			continue
		}
		for _, args := range probes(d, p, top) {
			id++
			b, _ := json.Marshal(args)
			resp, err := ex.Exec(context.Background(), proto.Request{ID: id, Tool: d.Name, Args: b})
			if err != nil {
				t.Fatalf("%s %s: %v", d.Name, b, err)
			}
			out = append(out, d.Name+": "+resp.Text)
			if strings.Contains(resp.Text, secretModeLine) {
				out = append(out, d.Name+": described a file holding the secret: "+Secret)
			}
		}
	}
	return strings.Join(out, "\n")
}

// secretModeLine is stat's line for a file of mode [SecretMode].
const secretModeLine = "mode: 0604 ("

// probes are the arguments EveryTool gives a tool about p, by its
// attributes: a walk is asked under p and over the whole tree, a listing
// of p and of the folder around it, anything else about p.
func probes(d proto.ToolDef, p, top string) []map[string]any {
	whole := func(m map[string]any) map[string]any {
		if top != "" {
			m["path"] = top
		}
		return m
	}
	switch {
	case d.Is(proto.WalksTree | proto.ReadsFiles):
		return []map[string]any{{"pattern": "MOAT|inside|doc|env", "path": p}, whole(map[string]any{"pattern": "MOAT-SECRET"})}
	case d.Is(proto.WalksTree):
		return []map[string]any{{"pattern": "**", "path": p}, whole(map[string]any{"pattern": "**/*"})}
	case d.Is(proto.ListsFolders):
		return []map[string]any{{"path": p}, {"path": path.Dir(p)}}
	}
	return []map[string]any{{"path": p}}
}
