package tools

import "bytes"

// finder searches for one literal with Boyer-Moore-Horspool. Under wasm,
// where Go's bytes.Index has no assembly and falls back to a byte loop or
// Rabin-Karp, skipping up to len(pattern) bytes per step is what makes a
// literal search cheap (a 12-byte literal over Go's source tree: several
// times faster than bytes.Index in the guest). Short patterns, where
// skipping gains little, use bytes.Index.
type finder struct {
	pat  []byte
	skip [256]int
}

// minSkipLen is the shortest pattern worth the skip table.
const minSkipLen = 4

func newFinder(pat []byte) *finder {
	f := &finder{pat: pat}
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
	if n < minSkipLen {
		return bytes.Index(b, f.pat)
	}
	last := n - 1
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
