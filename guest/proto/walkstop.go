package proto

import (
	"context"
	"sync"
)

// WalkStop is what the shards of one split grep share as they walk: who
// walks each folder unit (Claim, Deal), and where they may stop walking: a file
// at or before which the merged answer is already cut, so no shard's
// hits past it can be shown, and a shard still walking may stop once it
// passes it. Two things make a stop: a shard that finished at its own
// cap (GrepShardResult.StopAt: its own hits before that file fill the
// cap), posted by the host (host/fanout) when the shard answers; and the
// shards' progress as they walk (Report), which Judge turns into a stop
// once the hits all shards have found before one place fill the cap. The
// guest reports and asks (moat.walk_stop) as it walks. Safe for
// concurrent use.
type WalkStop struct {
	mu sync.Mutex
	at string
	// Judge, if set, is told each shard's progress and answers a stop
	// that progress makes valid, or "". It is called with the WalkStop's
	// lock held, so it needs none of its own; set it before the shards
	// start.
	Judge func(Progress) string
	// Deal, if set, deals the folder units of the shards' walk as they
	// reach them (Claim): told a unit a shard has reached, it answers
	// whether that unit is the shard's to walk. It is called with the
	// lock held; set it before the shards start.
	Deal func(unit string) bool
}

// Progress is how far one shard of a split grep has walked: every entry
// before At in walk order is searched (At is the entry it is at), and its
// answer so far holds Hits hits in Bytes bytes. At "" means the shard's
// walk ended with all of its share searched.
type Progress struct {
	Shard       int
	At          string
	Hits, Bytes int
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

// Report tells w a shard's progress and answers the stop after it (At).
func (w *WalkStop) Report(p Progress) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == "" && w.Judge != nil {
		w.at = w.Judge(p)
	}
	return w.at
}

// Claim asks for folder unit u of the walk for the shard that has
// reached it (moat.claim_unit): mine reports whether the shard walks it,
// and ok is false when there is no Deal (the shard then deals its units
// itself, by their weights, as every other shard of the call does too).
func (w *WalkStop) Claim(u string) (mine, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.Deal == nil {
		return false, false
	}
	return w.Deal(u), true
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
