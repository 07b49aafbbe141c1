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
