package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
)

// Merge merges the answers of a split call's shares (host/fanout), each
// the JSON a call of the internal tool shard answered, into the answer
// one call gives; args and lim are the split call's. The merge is chosen
// by the shard tool's argument struct in proto's registry, as the
// handlers are, so the caller names no tool.
func Merge(shard string, args []byte, lim proto.Limits, answers [][]byte) (proto.Response, error) {
	d, ok := proto.Lookup(shard)
	if ok {
		switch d.NewArgs().(type) {
		case *proto.GrepShardArgs:
			return mergeAs(shard, args, lim, answers, MergeGrep)
		case *proto.GlobShardArgs:
			return mergeAs(shard, args, lim, answers, MergeGlob)
		}
	}
	return proto.Response{}, fmt.Errorf("%s is not a shard of a split call", shard)
}

// mergeAs decodes each answer as an R and merges them with merge.
func mergeAs[R any](shard string, args []byte, lim proto.Limits, answers [][]byte, merge func([]byte, proto.Limits, []R) proto.Response) (proto.Response, error) {
	shards := make([]R, len(answers))
	for i, b := range answers {
		if err := json.Unmarshal(b, &shards[i]); err != nil {
			return proto.Response{}, fmt.Errorf("malformed answer of %s %d: %w", shard, i, err)
		}
	}
	return merge(args, lim, shards), nil
}

// Stops says whether the shares of the split call whose shard tool is
// shard can stop early (a grep's: proto.WalkStop): a share that finished
// at its cap fills the answer up to the file where it stopped.
func Stops(shard string) bool {
	d, ok := proto.Lookup(shard)
	if !ok {
		return false
	}
	_, grep := d.NewArgs().(*proto.GrepShardArgs)
	return grep
}

// StopOf is where a finished share, whose answer is answer, lets the
// shares still walking stop: the file at which it reached its cap, or ""
// for none (no cap reached, an answer that does not decode, or a path
// that was not UTF-8, which came as U+FFFD and sorts elsewhere: no stop
// rather than one in the wrong place).
func StopOf(shard string, answer []byte) string {
	if !Stops(shard) {
		return ""
	}
	var r struct {
		More   bool   `json:"more"`
		StopAt string `json:"stop_at"`
	}
	if json.Unmarshal(answer, &r) != nil || !r.More || !utf8.ValidString(r.StopAt) || strings.ContainsRune(r.StopAt, utf8.RuneError) {
		return ""
	}
	return r.StopAt
}
