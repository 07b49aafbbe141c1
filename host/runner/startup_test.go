package runner_test

import (
	"context"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/runner"
)

// BenchmarkOneShot is what `moat tool` does after flag parsing: load the
// compiled guest from a warm cache, start an instance, make one call.
func BenchmarkOneShot(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	if m, err := runner.Compile(ctx, dir); err != nil {
		b.Fatal(err)
	} else {
		m.Close(ctx)
	}
	root := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := runner.New(ctx, runner.Config{Root: root, Resolver: confine.Auto, CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Exec(ctx, proto.Request{ID: 1, Tool: proto.ListDir, Args: []byte(`{"path":"."}`)}); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// BenchmarkLoadGuest is the load of the compiled guest from a warm cache,
// through the stub cache and through wazero's own (which decodes and
// validates the whole module first), side by side in one run.
//
//	go test ./host/runner -run XX -bench LoadGuest -count 5
func BenchmarkLoadGuest(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	m, err := runner.Compile(ctx, dir) // fills both: the code is one file under two names
	if err != nil {
		b.Fatal(err)
	}
	m.Close(ctx)
	for _, c := range []struct {
		name string
		load func(context.Context, string) (*runner.Module, error)
	}{{"stub cache", runner.Compile}, {"wazero's cache", runner.CompileOwnCache}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				m, err := c.load(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				m.Close(ctx)
			}
		})
	}
}
