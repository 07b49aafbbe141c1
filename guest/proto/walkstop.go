package proto

import (
	"context"
	"sync"
)

// WalkStop is where the shards of one split grep may stop walking: the
// file at which a shard that has finished stopped at its cap
// (GrepShardResult.StopAt). The merged answer is then cut at or before
// that file (the shard's own hits before it already fill the cap), so
// no shard's hits past it can be shown, and a shard still walking may
// stop once it passes it. The host (host/fanout) posts it when a shard
// answers; the guest asks for it (moat.walk_stop) as it walks. Safe for
// concurrent use.
type WalkStop struct {
	mu sync.Mutex
	at string
}

// Post records at, unless a stop is already recorded: any shard's stop is
// a valid one for all the others, so the first is kept.
func (w *WalkStop) Post(at string) {
	if at == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == "" {
		w.at = at
	}
}

// At is the stop posted so far, "" for none.
func (w *WalkStop) At() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at
}

type walkStopKey struct{}

// WithWalkStop is ctx for a shard's call whose walk may stop at w's stop.
func WithWalkStop(ctx context.Context, w *WalkStop) context.Context {
	return context.WithValue(ctx, walkStopKey{}, w)
}

// WalkStopFrom is the WalkStop of ctx (WithWalkStop), or nil.
func WalkStopFrom(ctx context.Context) *WalkStop {
	w, _ := ctx.Value(walkStopKey{}).(*WalkStop)
	return w
}
