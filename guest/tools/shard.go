package tools

import "strings"

// dealer deals the units of a walk split over several instances (a
// grep_shard's or glob_shard's share, Shard of Shards) so that every unit
// is walked by exactly one shard and all shards agree without talking.
// With shards <= 1 everything is this instance's.
type dealer struct {
	shard, shards int
	dirs          int // folder units dealt so far, in walk order
}

// shardDepth is the depth (below the call's path) of the units a sharded
// grep or glob deals out: every folder at this depth and every file down
// to it is a unit, a folder dealt in turn (mineDir), a file by a hash of
// its path (skipIn, which leaves the others' files out of the listing
// before any entry is made for them; files are many and each is small,
// so a hash shares them out evenly enough); whatever lies deeper goes
// with the folder it is in. Each shard still lists the folders above that depth (a few hundred
// entries in Go's source tree), less the files dealt to the others, but
// walks only its own subtrees, so no walking is done twice below it.
// Depth 2 splits a source tree finely enough that the shards finish
// together.
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

// mineDir deals the next folder unit in walk order and reports whether
// it is this shard's. Every shard walks the folder units in the same
// order, so they agree, and the heavy units alternate exactly.
func (d *dealer) mineDir() bool {
	k := d.dirs
	d.dirs++
	return k%d.shards == d.shard
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
		if dir != start && d.depth(start, dir) >= shardDepth {
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
