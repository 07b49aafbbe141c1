package runner

import (
	"context"
	"path/filepath"
	"time"

	"github.com/moatdev/moat/guest"
)

// CompileWasm compiles another module in place of the guest, for tests of
// how the runner survives a hostile one.
func CompileWasm(ctx context.Context, wasm []byte) (*Module, error) {
	return compile(ctx, "", wasm)
}

// HoldHostDeadline makes r's calls carry their deadline to the guest as
// usual (the same proto.Limits.TimeLimit) while the host itself never
// gives up on them: a test then sees whether the guest answers at its own
// deadline, without racing the host's clock against the guest's on a
// loaded machine. sent, if not nil, receives each call's deadline.
func HoldHostDeadline(r *Runner, sent func(time.Time)) {
	r.withTimeout = func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
		dl := time.Now().Add(d)
		if sent != nil {
			sent(dl)
		}
		return heldContext{ctx, dl}, func() {}
	}
}

// heldContext reports a deadline it does not enforce.
type heldContext struct {
	context.Context
	dl time.Time
}

func (h heldContext) Deadline() (time.Time, bool) { return h.dl, true }

// TimeLimit is timeLimit, for the test of the relation between the two
// deadlines.
func TimeLimit(ctx context.Context) int64 { return timeLimit(ctx) }

// Stubbed reports whether m was loaded through the stub cache.
func Stubbed(m *Module) bool { return m.stubbed }

// StubsDir is the stub cache's folder for cacheDir.
func StubsDir(cacheDir string) string { return filepath.Join(cacheDir, "wazero", stubsName) }

// CompileOwnCache compiles the guest through wazero's own cache in
// cacheDir, the stub cache passed by: the load the stub cache replaces.
func CompileOwnCache(ctx context.Context, cacheDir string) (*Module, error) {
	defer holdCollector()() // as Compile, from a warm cache
	return compileWith(ctx, filepath.Join(cacheDir, "wazero"), guest.Wasm())
}
