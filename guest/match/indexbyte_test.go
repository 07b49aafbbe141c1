package match

import (
	"bytes"
	"testing"
)

// TestIndexByte compares indexByteWords with bytes.IndexByte for the byte at
// every offset of texts of every length to 100, and for bytes that
// differ from it only in the high bit or by one (the word test's
// borrows).
func TestIndexByte(t *testing.T) {
	for n := 0; n <= 100; n++ {
		for _, fill := range []byte{'a', 'a' ^ 0x80, 'a' + 1, 'a' - 1, 0, 0xff} {
			text := bytes.Repeat([]byte{fill}, n)
			for at := -1; at < n; at++ {
				if at >= 0 {
					text[at] = 'a'
				}
				if got, want := indexByteWords(text, 'a'), bytes.IndexByte(text, 'a'); got != want {
					t.Fatalf("fill %#x, 'a' at %d of %d: %d, want %d", fill, at, n, got, want)
				}
				if at >= 0 {
					text[at] = fill
				}
			}
		}
	}
}
