package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/moatdev/moat/host/engine"
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
	benchGreps(b, sessionEngine(b, src, b.TempDir(), limits.Defaults()), []grepCase{
		{"dotstar 2000", `{"pattern":".*","max_results":2000}`},
		{"dotstar 100", `{"pattern":".*"}`},
		{"hex40 2000", `{"pattern":"[0-9a-f]{40}","max_results":2000}`},
		{"hex0x 2000", `{"pattern":"0x[0-9a-fA-F]{8,}","max_results":2000}`},
		{"upper12 2000", `{"pattern":"[A-Z_]{12,}","max_results":2000}`},
		{"none count", `{"pattern":"zqzqzq","output_mode":"count","max_results":2000}`},
		{"hexescape 2000", `{"pattern":"\\\\x[0-9a-f]{2}","max_results":2000}`},
		{"date 2000", `{"pattern":"\\b[0-9]{4}-[0-9]{2}-[0-9]{2}\\b","max_results":2000}`},
		{"err 2000", `{"pattern":"err","max_results":2000}`},
		{"caret count runtime", `{"pattern":"^","path":"runtime","output_mode":"count","max_results":2000}`},
		{"istrasse count", `{"pattern":"(?i)traße","output_mode":"count","max_results":2000}`},
	})
}

// BenchmarkSessionHeavyFolder is a grep over a tree where one folder at
// the depth the shards deal out whole holds half the bytes (a vendored
// dependency beside 300 small packages): counting a pattern with no hits
// over all of it, and listing the first 1000 lines of one every file
// holds once, at its end (the folder and half the packages). Dealt whole, that folder is one shard's, and the call lasts as
// long as it does; the shares' weights, learned in the call before the
// timing, split it among them (guest/tools balance.go). Every letter of
// both patterns is on every line, so the search spends CPU on every byte,
// as a regex's does; cmd/moat-bench's heavy-folder rows search for a
// byte no line has.
//
//	go test ./host/engine -run XX -bench SessionHeavyFolder -count 5
func BenchmarkSessionHeavyFolder(b *testing.B) {
	root := b.TempDir()
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\n")
	write := func(dir string, files, size int) {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			b.Fatal(err)
		}
		var data []byte
		for len(data) < size {
			data = append(data, line...)
		}
		data = append(data, "a needle at the end\n"...)
		for i := range files {
			if err := os.WriteFile(filepath.Join(root, dir, fmt.Sprintf("f%03d.txt", i)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	write("aaa/vendor", 300, 128<<10) // 38 MB in one unit, first in walk order
	for i := range 300 {
		write(fmt.Sprintf("pkg/p%03d", i), 4, 32<<10) // 38 MB in 300 units
	}
	benchGreps(b, sessionEngine(b, root, b.TempDir(), limits.Defaults()), []grepCase{
		{"none count", `{"pattern":"zqzqzq","output_mode":"count"}`},
		{"needle 1000", `{"pattern":"needle","max_results":1000}`},
	})
}

// A grepCase is one grep of a benchmark: its name and arguments.
type grepCase struct{ name, args string }

// benchGreps times each grep in e, after a first call of it that is not
// timed (it finds the secrets of every file it reads, and its shares'
// weights are learned).
func benchGreps(b *testing.B, e *engine.Engine, cases []grepCase) {
	ctx := context.Background()
	for _, c := range cases {
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
