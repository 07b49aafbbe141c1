package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/limits"
	"github.com/moatdev/moat/host/redact"
)

// BenchmarkSessionGrepRedact is make bench's session grep rows through the
// engine (guests already up, fanned out as isolate wires them, over
// GOROOT/src), with redaction off and on (the files' redacted view and
// the answer's lines), each pattern's two cases side by side: redaction's
// cost in a session is the ratio of the two, and the answer's redaction
// alone on the same answer (redact-only). Each mode's first call, which
// finds in every file (a session's first grep of the tree), is made
// before the timing: the later ones read what was found from memory. Also a grep listing
// lines (the answer a model reads, up to the output cap) and a 256 KiB
// read_file, where the redactor has the most text to scan.
//
//	go test ./host/engine -run XX -bench SessionGrepRedact -count 5
func BenchmarkSessionGrepRedact(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no GOROOT/src")
	}
	ctx := context.Background()
	cache := b.TempDir()
	engines := map[string]*engine.Engine{}
	for name, noRedact := range map[string]bool{"redact=off": true, "redact=on": false} {
		// Each mode its own guests: with redaction on they read every
		// file's redacted view (host/confine), and the engine redacts
		// each line of the answer again.
		lim := limits.Defaults()
		lim.MaxResults, lim.MaxReadBytes, lim.NoRedact = proto.MaxMaxResults, 256<<10, noRedact
		engines[name] = sessionEngine(b, src, cache, lim)
	}
	calls := []struct{ name, tool, args string }{
		{"todo count", "grep", fmt.Sprintf(`{"pattern":"todo","ignore_case":true,"output_mode":"count","max_results":%d}`, proto.MaxMaxResults)},
		{"literal count", "grep", fmt.Sprintf(`{"pattern":"func NewReplacer","output_mode":"count","max_results":%d}`, proto.MaxMaxResults)},
		{"err lines", "grep", `{"pattern":"err","path":"net/http"}`},
		{"read_file", "read_file", `{"path":"net/http/server.go"}`},
	}
	red := redact.New()
	for _, c := range calls {
		// The redactor alone on this call's answer: its cost, free of the
		// walk's noise on a loaded machine.
		text := engines["redact=off"].Call(ctx, c.tool, json.RawMessage(c.args)).Text
		b.Run(c.name+"/redact-only", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				red.RedactLines(text)
			}
		})
		for _, mode := range []string{"redact=off", "redact=on"} {
			e := engines[mode]
			e.Call(ctx, c.tool, json.RawMessage(c.args))
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				for b.Loop() {
					if res := e.Call(ctx, c.tool, json.RawMessage(c.args)); res.IsError {
						b.Fatal(res.Text)
					}
				}
			})
		}
	}
}

// sessionEngine is an engine over src as a session opens it
// (host/assembly), in this process: guests already up, fanned out over
// the pool, files and answers redacted unless lim.NoRedact. The guests
// close with b.
func sessionEngine(b *testing.B, src, cache string, lim limits.Options) *engine.Engine {
	b.Helper()
	lim.Isolate = "off"
	sb, err := assembly.Open(context.Background(), assembly.Options{Roots: []string{src}, CacheDir: cache, Limits: lim})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	return sb.Engine
}
