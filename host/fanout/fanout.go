// Package fanout splits a grep or a glob over several guest instances and
// merges their answers into exactly the answer one instance gives.
//
// A walk over a large tree is bound by one core in one guest: wasm runs
// single-threaded. [Splitter] is a decorator around any executor that runs
// concurrent calls in parallel (host/runner with Config.Parallel > 1): it
// sends a grep as several proto.GrepShard calls at once, and a glob as
// proto.GlobShard calls, each walking only its share of the tree, and
// merges their answers with guest/tools' MergeGrep and MergeGlob, in walk
// order and under the same caps and notices. Every other call passes
// through untouched, so the runner below runs calls and knows no tool.
package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
	"github.com/moatdev/moat/host/engine"
)

// Splitter is an [engine.Executor] that splits each grep and glob into Shards
// concurrent shard calls to Next and merges them. Build it with [New].
type Splitter struct {
	Next   engine.Executor
	Shards int // at least 2
}

// New wraps next so that a grep or glob is split into shards calls; with
// shards <= 1 it returns next itself. shards should be at most how many
// calls next runs at once (runner.Runner.Parallel): more only queue.
func New(next engine.Executor, shards int) engine.Executor {
	if shards <= 1 {
		return next
	}
	return &Splitter{Next: next, Shards: shards}
}

// Exec runs req: a grep or glob split over the shards, anything else as
// it is. An error of any shard is the call's error; a shard's error answer
// (every shard reports the same one, a bad pattern say) is the answer.
func (g *Splitter) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	switch req.Tool {
	case proto.Grep:
		return split(ctx, g, req, proto.GrepShard, tools.MergeGrep, grepStop)
	case proto.Glob:
		return split(ctx, g, req, proto.GlobShard, tools.MergeGlob, nil)
	}
	return g.Next.Exec(ctx, req)
}

// grepStop is where a finished grep shard lets the others stop
// (proto.WalkStop): the file at which it reached its cap, if it did.
func grepStop(r *proto.GrepShardResult) string {
	if !r.More || !utf8.ValidString(r.StopAt) || strings.ContainsRune(r.StopAt, utf8.RuneError) {
		// A path that was not UTF-8 came as U+FFFD, which sorts
		// elsewhere: no stop, rather than one in the wrong place.
		return ""
	}
	return r.StopAt
}

// split sends req as g.Shards calls of the shard tool and merges their
// answers (each the JSON of an R) with merge. With stopOf, the shards
// share a proto.WalkStop: the first to finish with a stop (stopOf's
// answer, "" for none) lets those still walking stop past it.
func split[R any](ctx context.Context, g *Splitter, req proto.Request, shardTool string, merge func([]byte, proto.Limits, []R) proto.Response, stopOf func(*R) string) (proto.Response, error) {
	var args map[string]json.RawMessage
	if json.Unmarshal(req.Args, &args) != nil || args == nil {
		return g.Next.Exec(ctx, req) // not an object: the guest explains
	}
	if stopOf != nil {
		ctx = proto.WithWalkStop(ctx, &proto.WalkStop{})
	}
	resps := make([]proto.Response, g.Shards)
	shards := make([]R, g.Shards)
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
			if err := json.Unmarshal(proto.ShardJSON(resps[i]), &shards[i]); err != nil {
				bad[i] = fmt.Errorf("fanout: malformed answer of %s %d: %w", shardTool, i, err)
				return
			}
			if stopOf != nil {
				proto.WalkStopFrom(ctx).Post(stopOf(&shards[i]))
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
			return proto.Response{}, bad[i]
		}
	}
	resp := merge(req.Args, req.Limits, shards)
	resp.ID = req.ID
	return resp, nil
}

// Close closes Next.
func (g *Splitter) Close() error { return g.Next.Close() }
