package tools

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
)

// A split grep deals the folders at shardDepth out whole, as units. In
// turn, one shard was dealt cmd/compile (a sixth of Go's source tree)
// and walked long after the others were done; and an answer cut at its
// cap waits for the shard whose units before the cut weigh most. So each
// shard reports the heavy folders it walked to their end (weigher,
// proto.GrepShardResult.Weights), the host keeps them (Balance) and
// sends those below the next grep's path (proto.GrepShardArgs.Weights),
// and the shards deal by them (dealer): each unit, in walk order, to the
// shard whose units so far weigh least, and a folder heavier than a
// small share of the tree, and heavy for its entries, is split: dealt
// out finely as the folders above shardDepth are, rather than whole.
// The merged answer does not depend on it: any weights give exactly one
// instance's answer (TestShardedGrepWeightsEqualsOne).

const (
	// fileWeight is a file's weight besides its bytes: opening,
	// reading and closing one costs about as much as searching that much.
	fileWeight = 4 << 10
	// minWeight is the least weight of a folder a shard reports.
	minWeight = 256 << 10
	// maxWeights is how many folders a shard reports at most: its
	// heaviest.
	maxWeights = 256
	// unitWeight is the weight of a unit whose weight is not known: one
	// lighter than minWeight, or not walked yet.
	unitWeight = minWeight / 2
)

// weigher adds up the weight of the files a shard searches under each
// folder of its walk, and keeps the heavy folders it finished.
type weigher struct {
	open []proto.FolderWeight // the walk's start, down to the folder of the last file
	done []proto.FolderWeight // finished folders of at least minWeight
}

// add counts weight n for a file in folder dir, and the file as an entry
// of dir. The walk visits a folder's whole subtree before anything after
// it, so the folders open before that are not dir or its ancestors are
// finished.
func (w *weigher) add(dir string, n int64) {
	for len(w.open) > 0 && !within(dir, w.open[len(w.open)-1].Path) {
		w.pop()
	}
	rest := dir
	if len(w.open) > 0 {
		top := w.open[len(w.open)-1].Path
		switch {
		case top == dir:
			rest = ""
		case top == ".":
		default:
			rest = dir[len(top)+1:]
		}
	}
	for rest != "" {
		// Open the folders from the top down to dir, one level each:
		// each is an entry of the one above.
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			i = len(rest)
		}
		if len(w.open) > 0 {
			w.open[len(w.open)-1].Entries++
		}
		w.open = append(w.open, proto.FolderWeight{Path: dir[:len(dir)-len(rest)+i]})
		rest = rest[min(i+1, len(rest)):]
	}
	top := &w.open[len(w.open)-1]
	top.Bytes += n
	top.Entries++
}

// pop finishes the innermost open folder: its weight is its parent's too.
func (w *weigher) pop() {
	f := w.open[len(w.open)-1]
	w.open = w.open[:len(w.open)-1]
	if len(w.open) > 0 {
		w.open[len(w.open)-1].Bytes += f.Bytes
	}
	// A name not UTF-8 would come back to the host as U+FFFD: another
	// folder's name, or none.
	if f.Bytes >= minWeight && utf8.ValidString(f.Path) {
		w.done = append(w.done, f)
	}
}

// weights ends the walk: the folders still open are finished too, with
// what the walk searched of them, all of it or, if it was stopped, a part
// (the least they weigh: Balance keeps the most it is told). A stop falls
// most often in a heavy folder, and a folder unit whose weight was never
// told would never be split: the shard that reached it first would walk
// it alone, call after call. It returns the heaviest folders.
func (w *weigher) weights() []proto.FolderWeight {
	for len(w.open) > 0 {
		w.pop()
	}
	if len(w.done) > maxWeights {
		slices.SortFunc(w.done, func(a, b proto.FolderWeight) int { return cmp.Compare(b.Bytes, a.Bytes) })
		w.done = w.done[:maxWeights]
	}
	return w.done
}

// within reports whether folder dir is folder top or below it.
func within(dir, top string) bool {
	return top == "." || dir == top || len(dir) > len(top) && dir[len(top)] == '/' && strings.HasPrefix(dir, top)
}

// Balance keeps the weights the shares of split greps reported, and
// gives a later grep over the same tree those below its path (Known).
// The zero Balance is empty and ready; it is safe for concurrent use.
type Balance struct {
	mu sync.Mutex
	w  map[string]load // a folder's weight: the most all shares of one grep reported
}

// load is what Balance keeps of a folder: its weight and entries.
type load struct {
	bytes   int64
	entries int
}

const (
	// minSplit is the least weight of a folder that is split, and
	// splitShare the least share of the grep's tree it holds (when that
	// tree's weight is known): a shard's share, dealt in units of at most
	// this, ends within about one unit of the others'. A 64th split Go's
	// tree down to 2.5 MB chains (cmd/asm/internal/asm/testdata) and made
	// a grep whose answer ends early slower; a 32nd keeps the compiler's
	// 20 MB split and those whole.
	minSplit   = 2 << 20
	splitShare = 32
	// maxKnown bounds the folders Known gives: its heaviest.
	maxKnown = 256
	// maxLearned bounds the folders Balance keeps; past it, it starts over.
	maxLearned = 4096
	// maxFolderWeight bounds a weight reported (a pebibyte), so that no
	// sum of them overflows, and maxEntries the entries.
	maxFolderWeight = 1 << 50
	maxEntries      = 1 << 30
	// minEntryWeight is the least weight a split folder holds for each
	// of its own entries: every shard lists a split folder whole (the
	// host reads and judges each entry, about 9 us), so one of many
	// small files (cmd/go/testdata/script: 883 of 6 KB on average) costs
	// more to list twice than dealing it finely saves.
	minEntryWeight = 32 << 10
)

// heavyFolder is the least weight of a folder that is split, in a tree
// of weight total (0: not known).
func heavyFolder(total int64) int64 { return max(minSplit, total/splitShare) }

// Learn keeps the weights the shares of one split grep reported; a
// glob's shares carry none. A folder split among the shares is reported
// by each, its share: they are added up.
func (b *Balance) Learn(shares []Share) {
	sum := map[string]load{}
	for _, s := range shares {
		if r, ok := s.v.(*proto.GrepShardResult); ok {
			if len(r.Weights) > maxWeights {
				return // not a guest's answer: keep nothing of it
			}
			for _, w := range r.Weights {
				l := sum[w.Path]
				l.bytes += min(max(w.Bytes, 0), maxFolderWeight)
				l.entries += min(max(w.Entries, 0), maxEntries)
				sum[w.Path] = l
			}
		}
	}
	if len(sum) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil || len(b.w)+len(sum) > maxLearned {
		b.w = make(map[string]load, len(sum))
	}
	for p, n := range sum {
		// The most: a grep stopped early reports the folders it was in
		// with only what it searched of them, and some shares of a
		// split folder may have stopped sooner than others.
		old := b.w[p]
		b.w[p] = load{max(old.bytes, n.bytes), max(old.entries, n.entries)}
	}
}

// Weights is every folder b keeps, in walk order: for a later process
// to Remember (host/fanout keeps them in the cache folder).
func (b *Balance) Weights() []proto.FolderWeight {
	b.mu.Lock()
	out := make([]proto.FolderWeight, 0, len(b.w))
	for p, n := range b.w {
		out = append(out, proto.FolderWeight{Path: p, Bytes: n.bytes, Entries: n.entries})
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(x, y proto.FolderWeight) int { return walkOrder(x.Path, y.Path) })
	return out
}

// Remember keeps ws, what another process's Balance kept (Weights), as
// Learn keeps a grep's: each folder's most. Read from a file, they are
// checked as a guest's answer is: more than maxLearned is none of them,
// a path that is not a clean path of the tree is left out, and every
// number is bounded. The weights only deal the work: whatever they say,
// the answer is the same.
func (b *Balance) Remember(ws []proto.FolderWeight) {
	if len(ws) == 0 || len(ws) > maxLearned {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil || len(b.w)+len(ws) > maxLearned {
		b.w = make(map[string]load, len(ws))
	}
	for _, w := range ws {
		if c, err := cleanPath(w.Path); err != nil || c != w.Path {
			continue
		}
		n := load{min(max(w.Bytes, 0), maxFolderWeight), min(max(w.Entries, 0), maxEntries)}
		old := b.w[w.Path]
		b.w[w.Path] = load{max(old.bytes, n.bytes), max(old.entries, n.entries)}
	}
}

// Known is the GrepShardArgs.Weights of a grep split into shares (shard
// is its shard tool, args its arguments): the folders known at or below
// the grep's path, its heaviest maxKnown, in walk order. nil for other
// calls, or when none is known.
func (b *Balance) Known(shard string, args []byte) []proto.FolderWeight {
	if !Stops(shard) {
		return nil
	}
	var a proto.GrepArgs
	if proto.DecodeArgs(args, &a) != nil {
		return nil
	}
	start, err := cleanPath(a.Path)
	if err != nil {
		return nil
	}
	b.mu.Lock()
	var out []proto.FolderWeight
	for p, n := range b.w {
		if within(p, start) {
			out = append(out, proto.FolderWeight{Path: p, Bytes: n.bytes, Entries: n.entries})
		}
	}
	b.mu.Unlock()
	if len(out) > maxKnown {
		slices.SortFunc(out, func(x, y proto.FolderWeight) int {
			return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), strings.Compare(x.Path, y.Path))
		})
		out = out[:maxKnown]
	}
	slices.SortFunc(out, func(x, y proto.FolderWeight) int { return walkOrder(x.Path, y.Path) })
	return out
}
