package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/moatdev/moat/host/limits"
)

// BenchmarkSessionManyHits is the answers with many hits a model asks for,
// through the engine in guests already up (as moat mcp runs them), over
// GOROOT/src: the call's first run (which finds in every file it reads)
// is made before the timing.
//
//	go test ./host/engine -run XX -bench SessionManyHits -count 5
func BenchmarkSessionManyHits(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no GOROOT/src")
	}
	ctx := context.Background()
	e := sessionEngine(b, src, b.TempDir(), limits.Defaults())
	for _, c := range []struct{ name, args string }{
		{"dotstar 2000", `{"pattern":".*","max_results":2000}`},
		{"dotstar 100", `{"pattern":".*"}`},
		{"hex40 2000", `{"pattern":"[0-9a-f]{40}","max_results":2000}`},
		{"hex0x 2000", `{"pattern":"0x[0-9a-fA-F]{8,}","max_results":2000}`},
		{"upper12 2000", `{"pattern":"[A-Z_]{12,}","max_results":2000}`},
		{"err 2000", `{"pattern":"err","max_results":2000}`},
		{"caret count runtime", `{"pattern":"^","path":"runtime","output_mode":"count","max_results":2000}`},
		{"istrasse count", `{"pattern":"(?i)traße","output_mode":"count","max_results":2000}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			if res := e.Call(ctx, "grep", json.RawMessage(c.args)); res.IsError {
				b.Fatal(res.Text)
			}
			for b.Loop() {
				if res := e.Call(ctx, "grep", json.RawMessage(c.args)); res.IsError {
					b.Fatal(res.Text)
				}
			}
		})
	}
}
