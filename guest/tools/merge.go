package tools

import (
	"encoding/json"
	"fmt"

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
