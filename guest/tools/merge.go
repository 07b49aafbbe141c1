package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
)

// A split call's shares (host/fanout) are decoded once each, as each
// arrives (DecodeShare: a grep share's stop is known then, and posted to
// the shares still walking), and merged when all have (Merge). The kind
// of share is chosen by the shard tool's argument struct in proto's
// registry, as the handlers are, so the caller names no tool.

// Share is one share's answer of a split call, decoded.
type Share struct {
	v    any    // *proto.GrepShardResult or *proto.GlobShardResult
	stop string // see Stop
}

// Stop is where the share lets the shares still walking stop
// (proto.WalkStop): for a grep share that reached its cap, the file at
// which it did; "" for none (no cap reached, a glob's share, or a path
// that was not UTF-8, which came as U+FFFD and sorts elsewhere: no stop
// rather than one in the wrong place).
func (s Share) Stop() string { return s.stop }

// Stops says whether the shares of the split call whose shard tool is
// shard can stop early (a grep's): a share that finished at its cap fills
// the answer up to the file where it stopped.
func Stops(shard string) bool {
	_, grep := shardArgs(shard).(*proto.GrepShardArgs)
	return grep
}

// DecodeShare decodes answer, the JSON the i-th call of the internal
// tool shard answered.
func DecodeShare(shard string, i int, answer []byte) (Share, error) {
	var v any
	switch shardArgs(shard).(type) {
	case *proto.GrepShardArgs:
		v = new(proto.GrepShardResult)
	case *proto.GlobShardArgs:
		v = new(proto.GlobShardResult)
	default:
		return Share{}, notShard(shard)
	}
	if err := json.Unmarshal(answer, v); err != nil {
		return Share{}, fmt.Errorf("malformed answer of %s %d: %w", shard, i, err)
	}
	s := Share{v: v}
	if r, ok := v.(*proto.GrepShardResult); ok && r.More && utf8.ValidString(r.StopAt) && !strings.ContainsRune(r.StopAt, utf8.RuneError) {
		s.stop = r.StopAt
	}
	return s, nil
}

// Merge merges the shares of a split call, each decoded by DecodeShare
// for the shard tool shard, into the answer one call gives; args and lim
// are the split call's.
func Merge(shard string, args []byte, lim proto.Limits, shares []Share) (proto.Response, error) {
	switch shardArgs(shard).(type) {
	case *proto.GrepShardArgs:
		return mergeAs(shard, args, lim, shares, MergeGrep)
	case *proto.GlobShardArgs:
		return mergeAs(shard, args, lim, shares, MergeGlob)
	}
	return proto.Response{}, notShard(shard)
}

// mergeAs merges shares, each an R, with merge.
func mergeAs[R any](shard string, args []byte, lim proto.Limits, shares []Share, merge func([]byte, proto.Limits, []R) proto.Response) (proto.Response, error) {
	rs := make([]R, len(shares))
	for i, s := range shares {
		r, ok := s.v.(*R)
		if !ok {
			return proto.Response{}, fmt.Errorf("share %d was not decoded as a share of %s", i, shard)
		}
		rs[i] = *r
	}
	return merge(args, lim, rs), nil
}

// shardArgs is the argument struct of the tool named shard (nil for a
// name no tool has).
func shardArgs(shard string) any {
	d, ok := proto.Lookup(shard)
	if !ok {
		return nil
	}
	return d.NewArgs()
}

func notShard(shard string) error {
	return fmt.Errorf("%s is not a shard of a split call", shard)
}
