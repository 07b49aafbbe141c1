package runner

import (
	"context"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"

	"github.com/moatdev/moat/guest/proto"
)

// moat.walk_stop tells a shard's walk where it may stop (proto.WalkStop):
//
//	walk_stop(buf, buf_len) -> n
//
// It returns the length of the stop's path, 0 for none, and writes the
// path into buf (guest memory) when it fits. A call that is not a shard
// of a split grep, or memory out of the guest's bounds, has none, so the
// guest then walks as far as its own caps say.
const walkStopName = "walk_stop"

// walkStopKey is the context key of the calling instance's current stop,
// set for each call by Exec from the call's context.
type walkStopKey struct{}

// withWalkStop is ctx for running a guest whose moat.walk_stop answers
// from cur.
func withWalkStop(ctx context.Context, cur *atomic.Pointer[proto.WalkStop]) context.Context {
	return context.WithValue(ctx, walkStopKey{}, cur)
}

func walkStop(ctx context.Context, mod api.Module, stack []uint64) {
	buf, size := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	stack[0] = 0
	cur, _ := ctx.Value(walkStopKey{}).(*atomic.Pointer[proto.WalkStop])
	if cur == nil {
		return
	}
	w := cur.Load()
	if w == nil {
		return
	}
	at := w.At()
	if at == "" || uint64(len(at)) > uint64(size) {
		stack[0] = api.EncodeU32(uint32(len(at)))
		return
	}
	if mod.Memory() == nil || !mod.Memory().Write(buf, []byte(at)) {
		return
	}
	stack[0] = api.EncodeU32(uint32(len(at)))
}
