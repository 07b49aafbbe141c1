package match

import (
	"bytes"
	"testing"
)

// TestIndexShort compares indexShortWords with bytes.Index for patterns
// of two and three bytes at every offset of texts of every length to 70,
// over fills that match the pattern's first byte, its second, both but
// not the third, and bytes that differ from them only in the high bit or
// by one (the word test's borrows).
func TestIndexShort(t *testing.T) {
	for _, pat := range []string{"0x", "err", "ee", "eee", "\x00\xff", "\xff\x00\x80"} {
		p := []byte(pat)
		fills := [][]byte{{p[0]}, {p[1]}, p[:2], {p[0] ^ 0x80}, {p[1] + 1}, {p[0] - 1}, {0}, {0xff}, []byte("ab")}
		for n := 0; n <= 70; n++ {
			for _, fill := range fills {
				text := bytes.Repeat(fill, n+1)[:n]
				check := func() {
					t.Helper()
					if got, want := indexShortWords(text, p), bytes.Index(text, p); got != want {
						t.Fatalf("indexShortWords(%q, %q) = %d, want %d", text, p, got, want)
					}
				}
				check()
				for at := 0; at+len(p) <= n; at++ {
					saved := append([]byte(nil), text[at:at+len(p)]...)
					copy(text[at:], p)
					check()
					if len(p) == 3 { // the first two bytes only
						text[at+2] ^= 1
						check()
					}
					copy(text[at:], saved)
				}
			}
		}
	}
}

// FuzzIndexShort is indexShortWords against bytes.Index.
func FuzzIndexShort(f *testing.F) {
	f.Add([]byte("an err, a 0x and errs"), []byte("err"))
	f.Add([]byte("0000000000000000000000x0x"), []byte("0x"))
	f.Fuzz(func(t *testing.T, text, pat []byte) {
		if len(pat) < 2 || len(pat) > 3 {
			return
		}
		if got, want := indexShortWords(text, pat), bytes.Index(text, pat); got != want {
			t.Fatalf("indexShortWords(%q, %q) = %d, want %d", text, pat, got, want)
		}
	})
}
