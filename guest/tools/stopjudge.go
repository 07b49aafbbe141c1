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

// UnitDeal is the proto.WalkStop.Deal of a grep split into shards (shard
// is its shard tool): each folder unit goes to the first shard that
// reaches it. Every shard walks the units in the same order (walkOrder),
// so a unit after the last one dealt has been reached by no other shard
// yet, and one at or before it was dealt already. The shards so take the
// units as each becomes free, whatever they cost to search, where a deal
// by weights made in advance (dealer.mineDir) leaves one shard still
// searching while the other waits at the end, or walks past the place
// where the answer is cut. nil where the shards are not a grep's.
func UnitDeal(shard string) func(unit string) bool {
	if !Stops(shard) {
		return nil
	}
	last := ""
	return func(unit string) bool {
		if unit == "" || last != "" && walkOrder(unit, last) <= 0 {
			return false
		}
		last = unit
		return true
	}
}
