package tools

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
)

// StopJudge is the proto.WalkStop.Judge of a grep split into shards
// shards (shard is its shard tool; args and lim are the split call's):
// it turns the shards' progress as they walk into a stop, so that no
// shard walks far past where the merged answer is cut. Without it each
// shard walks until its own hits fill the cap, about shards times as far
// into the tree as the merged answer needs when the hits are spread
// evenly. nil where the shares cannot stop early (Stops) or the args do
// not decode.
//
// The stop it makes is the least place m that no shard still walking has
// reached yet: every file before m is searched by every shard, so the
// hits the shards have reported before m are all in the merged answer's
// walk order before m. When they are more than the cap (max_results), or
// their bytes more than proto.MaxGrepBytes, the merged answer is cut
// before m (MergeGrep's takeParts), and a shard may stop past m without
// changing one byte of it. A shard's hits before m are those of its last
// report at or before m, fewer than it may have: so the stop is never
// too early, only sometimes later than it could be.
func StopJudge(shard string, args []byte, lim proto.Limits, shards int) func(proto.Progress) string {
	if !Stops(shard) || shards < 2 {
		return nil
	}
	var a proto.GrepArgs
	if proto.DecodeArgs(args, &a) != nil {
		return nil
	}
	j := &stopJudge{max: grepMax(a, lim), reports: make([][]progressAt, shards), ended: make([]bool, shards)}
	return j.judge
}

// maxReports bounds the reports kept of one shard (one every 16 entries
// it walks: a million entries), so the host's memory for them is bounded
// whatever a guest reports.
const maxReports = 1 << 16

// stopJudge is StopJudge's state: each shard's reports, in walk order.
type stopJudge struct {
	max     int
	reports [][]progressAt
	ended   []bool // the shard's walk ended: it holds no place back
}

// progressAt is one report of a shard: its hits and bytes before at.
type progressAt struct {
	at          string
	hits, bytes int
}

func (j *stopJudge) judge(p proto.Progress) string {
	if p.Shard < 0 || p.Shard >= len(j.reports) {
		return ""
	}
	r := j.reports[p.Shard]
	switch {
	case p.At == "":
		j.ended[p.Shard] = true
	case !utf8.ValidString(p.At) || strings.ContainsRune(p.At, utf8.RuneError):
		// A path that was not UTF-8 would sort elsewhere once the
		// shares' paths come through JSON (see Share.Stop): not a place
		// to judge by, nor one to be held back by.
		return ""
	case len(r) >= maxReports:
		// Past the bound a shard's place stays where it was: its stop
		// comes later or not at all, never too early.
	case len(r) == 0 || walkOrder(p.At, r[len(r)-1].at) > 0:
		j.reports[p.Shard] = append(r, progressAt{p.At, p.Hits, p.Bytes})
	}
	// m: the least place a shard still walking has reported.
	m := ""
	for s, r := range j.reports {
		if j.ended[s] {
			continue
		}
		if len(r) == 0 {
			return "" // a shard not heard from yet may have hits anywhere
		}
		if last := r[len(r)-1].at; m == "" || walkOrder(last, m) < 0 {
			m = last
		}
	}
	if m == "" {
		return "" // every walk ended: nothing left to stop
	}
	hits, bytes := 0, 0
	for _, r := range j.reports {
		// The last report at or before m.
		k := sort.Search(len(r), func(i int) bool { return walkOrder(r[i].at, m) > 0 })
		if k > 0 {
			hits += r[k-1].hits
			bytes += r[k-1].bytes
		}
	}
	if hits > j.max || bytes > proto.MaxGrepBytes {
		return m
	}
	return ""
}
