package runner

import (
	"context"
	"math"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"

	"github.com/moatdev/moat/guest/proto"
)

// moat.walk_stop tells a shard's walk where it may stop (proto.WalkStop),
// told how far the shard has come (proto.Progress):
//
//	walk_stop(at, at_len, shard, hits, bytes, buf, buf_len) -> n
//
// at is the entry the walk is at (at_len 0: the walk ended with all of
// the shard's share searched), hits and bytes are i64s. It returns the
// length of the stop's path, 0 for none, and writes the path into buf
// (guest memory) when it fits. A call that is not a shard of a split
// grep, or memory out of the guest's bounds, has none, so the guest then
// walks as far as its own caps say.
const walkStopName = "walk_stop"

// maxWalkPath bounds the path of a progress report: past the OS's own
// limit on a path (4096 bytes), with a name's length to spare, so no
// entry of a walk is longer; a longer one is not copied out of the
// guest's memory.
const maxWalkPath = 8 << 10

// walkStopKey is the context key of the calling instance's current stop,
// set for each call by Exec from the call's context.
type walkStopKey struct{}

// withWalkStop is ctx for running a guest whose moat.walk_stop answers
// from cur.
func withWalkStop(ctx context.Context, cur *atomic.Pointer[proto.WalkStop]) context.Context {
	return context.WithValue(ctx, walkStopKey{}, cur)
}

func walkStop(ctx context.Context, mod api.Module, stack []uint64) {
	atPtr, atLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	shard, hits, bytes := api.DecodeU32(stack[2]), stack[3], stack[4]
	buf, size := api.DecodeU32(stack[5]), api.DecodeU32(stack[6])
	stack[0] = 0
	cur, _ := ctx.Value(walkStopKey{}).(*atomic.Pointer[proto.WalkStop])
	if cur == nil {
		return
	}
	w := cur.Load()
	if w == nil || mod.Memory() == nil {
		return
	}
	// Counts past what an int32 holds are not progress a guest makes.
	if hits > math.MaxInt32 || bytes > math.MaxInt32 {
		return
	}
	p := proto.Progress{Shard: int(shard), Hits: int(hits), Bytes: int(bytes)}
	if atLen > maxWalkPath {
		return // no walk's path is this long: not progress, and not copied
	}
	if atLen > 0 {
		at, ok := mod.Memory().Read(atPtr, atLen)
		if !ok {
			return
		}
		p.At = string(at)
	}
	at := w.Report(p)
	if at == "" || uint64(len(at)) > uint64(size) {
		stack[0] = api.EncodeU32(uint32(len(at)))
		return
	}
	if !mod.Memory().Write(buf, []byte(at)) {
		return
	}
	stack[0] = api.EncodeU32(uint32(len(at)))
}

// moat.claim_unit deals a folder unit of a split grep's walk to the
// shard that reaches it first (proto.WalkStop.Claim):
//
//	claim_unit(unit, unit_len) -> 1 the caller's, 2 another shard's, 0 no deal
//
// unit is the folder's path, guest memory. A call that is not a shard of
// a split grep, a unit path longer than any walk's, or memory out of the
// guest's bounds, gets 0, and the guest then deals its units itself, as
// every shard of that call does.
const claimUnitName = "claim_unit"

func claimUnit(ctx context.Context, mod api.Module, stack []uint64) {
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	stack[0] = 0
	cur, _ := ctx.Value(walkStopKey{}).(*atomic.Pointer[proto.WalkStop])
	if cur == nil || n == 0 || n > maxWalkPath || mod.Memory() == nil {
		return
	}
	w := cur.Load()
	if w == nil {
		return
	}
	unit, ok := mod.Memory().Read(ptr, n)
	if !ok {
		return
	}
	switch mine, ok := w.Claim(string(unit)); {
	case !ok:
	case mine:
		stack[0] = 1
	default:
		stack[0] = 2
	}
}
