package match

import "bytes"

//go:generate go run genrank.go

// finder searches for one literal. Go's wasm port has no vector
// instructions and bytes.Index no assembly there, but a scan for one byte
// a word at a time (indexByte) is several times faster than any byte
// loop. So the finder scans for the pattern's rarest byte (by byteRank)
// and checks the whole pattern around each occurrence. When that byte
// turns out to be common in this text (many occurrences that are not
// matches), a pattern of minSkipLen bytes or more switches to
// Boyer-Moore-Horspool, which skips up to len(pattern) bytes per step
// whatever the text, and a shorter one to a scan for its first two bytes
// a word at a time (indexShort).
type finder struct {
	pat  []byte
	rare int // offset in pat of its rarest byte
	skip [256]int
}

// minSkipLen is the shortest pattern worth the skip table.
const minSkipLen = 4

// maxShortRank is the most common (by byteRank) a shorter pattern's
// rarest byte may be for the finder to scan for it: '\\' and '-' are
// rare enough, letters and '(' are not.
const maxShortRank = 224

// Switching from the rare-byte scan to Boyer-Moore-Horspool: after
// rareMinFalse occurrences of the rare byte that were not matches, if they
// came more often than one per rareSpan bytes.
const (
	rareMinFalse = 32
	rareSpan     = 512
)

// newFinder prepares the search for pat.
func newFinder(pat []byte) *finder {
	f := &finder{pat: pat}
	for i, c := range pat {
		if byteRank[c] < byteRank[pat[f.rare]] {
			f.rare = i
		}
	}
	if len(pat) < minSkipLen {
		return f
	}
	last := len(pat) - 1
	for i := range f.skip {
		f.skip[i] = len(pat)
	}
	for i := 0; i < last; i++ {
		f.skip[pat[i]] = last - i
	}
	return f
}

// index returns the offset of the first occurrence of the pattern in b, or -1.
func (f *finder) index(b []byte) int {
	n := len(f.pat)
	if n == 0 {
		return 0
	}
	if n == 1 {
		return indexByte(b, f.pat[0])
	}
	if n < minSkipLen && int(byteRank[f.pat[f.rare]]) > maxShortRank {
		// Its rarest byte is common: a call of the word scan for each
		// occurrence costs more than a scan for two bytes at once.
		return indexShort(b, f.pat)
	}
	c := f.pat[f.rare]
	misses := 0
	for from := 0; from+n <= len(b); {
		i := indexByte(b[from+f.rare:len(b)-n+f.rare+1], c)
		if i < 0 {
			return -1
		}
		start := from + i
		if bytes.Equal(b[start:start+n], f.pat) {
			return start
		}
		from = start + 1
		misses++
		if n < minSkipLen && misses > 4+from>>4 {
			// Too short for Horspool: a scan for two bytes at once,
			// as soon as bytes.Index would give up its byte scan.
			if j := indexShort(b[from:], f.pat); j >= 0 {
				return from + j
			}
			return -1
		}
		if n >= minSkipLen && misses >= rareMinFalse && misses*rareSpan > from {
			if j := f.horspool(b[from:]); j >= 0 {
				return from + j
			}
			return -1
		}
	}
	return -1
}

// horspool is Boyer-Moore-Horspool over b.
func (f *finder) horspool(b []byte) int {
	last := len(f.pat) - 1
	lastByte := f.pat[last]
	for i := last; i < len(b); {
		c := b[i]
		if c == lastByte && bytes.Equal(b[i-last:i+1], f.pat) {
			return i - last
		}
		i += f.skip[c]
	}
	return -1
}
