package match

import "bytes"

//go:generate go run genrank.go

// finder searches for one literal. Go's wasm port has no vector
// instructions and bytes.Index no assembly there, but bytes.IndexByte does
// have a word-at-a-time loop, several times faster than any byte loop. So
// the finder scans with IndexByte for the pattern's rarest byte (by
// byteRank) and checks the whole pattern around each occurrence. When that
// byte turns out to be common in this text (many occurrences that are not
// matches), it switches to Boyer-Moore-Horspool, which skips up to
// len(pattern) bytes per step whatever the text. Patterns shorter than
// minSkipLen use bytes.Index.
type finder struct {
	pat  []byte
	rare int // offset in pat of its rarest byte
	skip [256]int
}

// minSkipLen is the shortest pattern worth the skip table.
const minSkipLen = 4

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
	if len(pat) < minSkipLen {
		return f
	}
	for i, c := range pat {
		if byteRank[c] < byteRank[pat[f.rare]] {
			f.rare = i
		}
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
	if n < minSkipLen {
		return bytes.Index(b, f.pat)
	}
	c := f.pat[f.rare]
	misses := 0
	for from := 0; from+n <= len(b); {
		i := bytes.IndexByte(b[from+f.rare:len(b)-n+f.rare+1], c)
		if i < 0 {
			return -1
		}
		start := from + i
		if bytes.Equal(b[start:start+n], f.pat) {
			return start
		}
		from = start + 1
		if misses++; misses >= rareMinFalse && misses*rareSpan > from {
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
