// Package fanout splits a grep or a glob over several guest instances and
// merges their answers into exactly the answer one instance gives.
//
// A walk over a large tree is bound by one core in one guest: wasm runs
// single-threaded. [Splitter] is a decorator around any executor that runs
// concurrent calls in parallel (host/runner with Config.Parallel > 1): it
// sends each call whose registry row names a Shard tool (grep, glob) as
// several calls of that internal tool at once, each walking only its share
// of the tree, and merges their answers with guest/tools' Merge, in walk
// order and under the same caps and notices. Every other call passes
// through untouched, so the runner below runs calls and knows no tool,
// and the splitter knows only the registry's attribute.
package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
	"github.com/moatdev/moat/host/engine"
)

// Splitter is an [engine.Executor] that splits each grep and glob into Shards
// concurrent shard calls to Next and merges them. Build it with [New].
type Splitter struct {
	Next   engine.Executor
	Shards int // at least 2
	// shardOf is each split tool's Shard tool, from the registry (New);
	// nil looks each call up.
	shardOf map[string]string
	// balance keeps where the work of the greps before lay, so that a
	// heavy folder is dealt out among the shards, not whole to one
	// (tools.Balance); lessons counts the greps that added to it.
	balance tools.Balance
	lessons atomic.Uint64
}

// New wraps next so that a grep or glob is split into shards calls; with
// shards <= 1 it returns next itself. shards should be at most how many
// calls next runs at once (runner.Runner.Parallel): more only queue.
func New(next engine.Executor, shards int) engine.Executor {
	if shards <= 1 {
		return next
	}
	g := &Splitter{Next: next, Shards: shards, shardOf: map[string]string{}}
	for _, d := range proto.Registry() {
		if d.Shard != "" {
			g.shardOf[d.Name] = d.Shard
		}
	}
	return g
}

// Exec runs req: a grep or glob split over the shards, anything else as
// it is. An error of any shard is the call's error; a shard's error answer
// (every shard reports the same one, a bad pattern say) is the answer.
func (g *Splitter) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	shard, ok := g.shardOf[req.Tool]
	if g.shardOf == nil {
		d, _ := proto.Lookup(req.Tool)
		shard, ok = d.Shard, d.Shard != ""
	}
	if !ok {
		return g.Next.Exec(ctx, req)
	}
	return g.split(ctx, req, shard)
}

// split sends req as g.Shards calls of the shard tool, decodes each
// answer as it arrives (guest/tools' DecodeShare) and merges them (Merge)
// once all have. Where the
// shard tool can stop early (tools.Stops), the shares share a
// proto.WalkStop.
func (g *Splitter) split(ctx context.Context, req proto.Request, shardTool string) (proto.Response, error) {
	var args map[string]json.RawMessage
	if json.Unmarshal(req.Args, &args) != nil || args == nil {
		return g.Next.Exec(ctx, req) // not an object: the guest explains
	}
	stops := tools.Stops(shardTool)
	if stops {
		// The first share to finish with a stop lets those still
		// walking stop past it, and so does the shares' progress as
		// they walk, once the hits before one place fill the answer.
		// The folder units go to whichever share reaches each first.
		ctx = proto.WithWalkStop(ctx, &proto.WalkStop{Judge: tools.StopJudge(shardTool, req.Args, req.Limits, g.Shards), Deal: tools.UnitDeal(shardTool)})
	}
	delete(args, "weights") // the host's alone to give
	if known := g.balance.Known(shardTool, req.Args); known != nil {
		args["weights"], _ = json.Marshal(known) // strings and numbers: cannot fail
	}
	resps := make([]proto.Response, g.Shards)
	shares := make([]tools.Share, g.Shards)
	errs := make([]error, g.Shards)
	bad := make([]error, g.Shards) // an answer that did not decode
	var wg sync.WaitGroup
	for i := range g.Shards {
		sub := req
		sub.Tool = shardTool
		args["shard"], args["shards"] = json.RawMessage(fmt.Sprint(i)), json.RawMessage(fmt.Sprint(g.Shards))
		sub.Args, _ = json.Marshal(args) // raw members of a decoded object: cannot fail
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], errs[i] = g.Next.Exec(ctx, sub)
			if errs[i] != nil || resps[i].IsError {
				return
			}
			// Decoded once, as it arrives: its stop is known now.
			shares[i], bad[i] = tools.DecodeShare(shardTool, i, proto.ShardJSON(resps[i]))
			if stops && bad[i] == nil {
				proto.WalkStopFrom(ctx).Post(shares[i].Stop())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return proto.Response{}, err
		}
	}
	for i, r := range resps {
		if r.IsError {
			return proto.Response{ID: req.ID, Text: r.Text, IsError: true}, nil
		}
		if bad[i] != nil {
			return proto.Response{}, fmt.Errorf("fanout: %w", bad[i])
		}
	}
	g.balance.Learn(shares)
	if stops {
		g.lessons.Add(1)
	}
	resp, err := tools.Merge(shardTool, req.Args, req.Limits, shares)
	if err != nil {
		return proto.Response{}, fmt.Errorf("fanout: %w", err)
	}
	resp.ID = req.ID
	return resp, nil
}

// Weights is what g learned of the tree's folders (tools.Balance
// Weights), for a later process to Remember, and how many greps taught
// it since it was made: with none, nothing new is worth keeping again.
func (g *Splitter) Weights() ([]proto.FolderWeight, uint64) {
	return g.balance.Weights(), g.lessons.Load()
}

// Remember gives g what another process's Splitter learned (Weights).
func (g *Splitter) Remember(ws []proto.FolderWeight) { g.balance.Remember(ws) }

// Close closes Next.
func (g *Splitter) Close() error { return g.Next.Close() }
