package tools

import (
	"strings"

	"github.com/moatdev/moat/guest/proto"
)

// dealer deals the units of a walk split over several instances (a
// grep_shard's or glob_shard's share, Shard of Shards) so that every unit
// is walked by exactly one shard and all shards agree without talking.
// With shards <= 1 everything is this instance's. A grep's shards are
// dealt their folder units by the host instead, as they reach them
// (grepper.mine, UnitDeal), which keeps them together whatever a unit
// costs; mineDir deals where the host does not (a glob, whose walk is in
// no fixed order, knowing no weights: in turn; natively).
type dealer struct {
	shard, shards int
	// known is the weight of each folder the host knows of
	// (proto.GrepShardArgs.Weights; nil for none), and heavy the least
	// weight of a folder that is split (dealt out finely).
	known map[string]proto.FolderWeight
	heavy int64
	// loads is the weight of the folder units dealt to each shard so far,
	// in walk order (mineDir).
	loads []int64
}

// newDealer is the dealer of share shard of shards of a walk from start,
// with the weights the host knows of the folders below it (balance.go).
func newDealer(shard, shards int, start string, known []proto.FolderWeight) dealer {
	d := dealer{shard: shard, shards: max(shards, 1)}
	if d.shards <= 1 {
		return d
	}
	d.loads = make([]int64, d.shards)
	if len(known) > 0 {
		d.known = make(map[string]proto.FolderWeight, len(known))
		for _, w := range known {
			d.known[w.Path] = w
		}
		d.heavy = heavyFolder(d.known[start].Bytes)
	}
	return d
}

// shardDepth is the depth (below the call's path) of the units a sharded
// grep or glob deals out: every folder at this depth and every file down
// to it is a unit, a folder dealt by its weight (mineDir), a file by a
// hash of its path (skipIn, which leaves the others' files out of the
// listing before any entry is made for them; files are many and each is
// small, so a hash shares them out evenly enough); whatever lies deeper
// goes with the folder it is in, unless the host knows it is heavy
// (splitDir: it is dealt out as the folders above this depth are). Each
// shard still lists the folders above that depth (a few hundred entries
// in Go's source tree), less the files dealt to the others, but walks
// only its own subtrees, so no walking is done twice below it. Depth 2
// splits a source tree finely enough that the shards finish together,
// but for its few heavy folders (balance.go).
const shardDepth = 2

// depth is how far below start p lies (1 for start's entries), at most
// shardDepth+1 (deeper than the units). Without
// sharding every path counts as deeper than the units, so all is searched.
func (d *dealer) depth(start, p string) int {
	if d.shards <= 1 {
		return shardDepth + 1
	}
	rel := p
	if start != "." && len(p) > len(start) && p[len(start)] == '/' && strings.HasPrefix(p, start) {
		rel = p[len(start)+1:] // TrimPrefix(p, start+"/") without making start+"/" each time
	}
	// Only whether it is above, at or below shardDepth matters: count the
	// slashes up to that (a deep path's are not all counted).
	n := 1
	for n <= shardDepth {
		i := strings.IndexByte(rel, '/')
		if i < 0 {
			break
		}
		rel = rel[i+1:]
		n++
	}
	return n
}

// splitDir reports whether folder p (start or below it) is dealt out
// finely: listed by every shard, its files dealt by their hash and its
// folders as units. Those above shardDepth are, and a heavy folder
// (heavy for its entries too: each shard lists it) whose parent is: a
// split folder inside a unit, which one shard alone walks, would lose
// the files dealt to the others.
func (d *dealer) splitDir(start, p string) bool {
	if d.depth(start, p) < shardDepth {
		return true
	}
	if p == start || d.known == nil {
		return false
	}
	k := d.known[p]
	return k.Bytes >= d.heavy && k.Bytes >= minEntryWeight*int64(k.Entries) && d.splitDir(start, parentDir(p))
}

// unit reports whether folder p, below start, is a unit dealt whole to
// one shard: a folder not split itself in a split folder.
func (d *dealer) unit(start, p string) bool {
	if d.shards <= 1 || p == start {
		return false
	}
	return !d.splitDir(start, p) && d.splitDir(start, parentDir(p))
}

// mineDir deals the next folder unit, p, in walk order and reports
// whether it is this shard's: to the shard whose units so far weigh
// least (the first of those), its weight the known one or unitWeight.
// Every shard walks the folder units in the same order with the same
// weights, so they agree; at any point of the walk the shares of the
// units before it differ by at most one unit's weight. Knowing nothing,
// the units alternate.
func (d *dealer) mineDir(p string) bool {
	k := 0
	for i, l := range d.loads {
		if l < d.loads[k] {
			k = i
		}
	}
	w := int64(unitWeight)
	if known, ok := d.known[p]; ok {
		w = max(known.Bytes, 0)
	}
	d.loads[k] += w
	return k == d.shard
}

// dealt reports whether a unit whose path hashes to h is this shard's, by
// the hash's high bits, FNV's best mixed (its low bit is the parity of
// the odd bytes).
func (d *dealer) dealt(h uint32) bool {
	return int(uint64(h)*uint64(d.shards)>>32) == d.shard
}

// skipIn is the walkOptions.skipIn of a walk from start: in a folder
// whose files are units, the files dealt to other shards; and everywhere,
// those the call's own name test, skip (may be nil), rules out.
func (d *dealer) skipIn(start string, skip func(string) bool) func(string) func(string) bool {
	if d.shards <= 1 {
		return skipAll(skip)
	}
	return func(dir string) func(string) bool {
		if dir != start && !d.splitDir(start, dir) {
			return skip // its files go with their folder
		}
		h := fnvBasis
		if dir != "." {
			h = fnvString(fnvString(h, dir), "/") // the hash of joinPath(dir, name), name to come
		}
		return func(name string) bool {
			return skip != nil && skip(name) || !d.dealt(fnvString(h, name))
		}
	}
}

// fnvString continues the 32-bit FNV-1a hash h over s.
func fnvString(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

const fnvBasis uint32 = 2166136261
