package match

import (
	"bytes"
	"strings"
	"testing"
)

// TestFinderCommonRareByte covers a text full of the pattern's rarest byte,
// where the finder gives up scanning for it and switches to
// Boyer-Moore-Horspool part way through.
func TestFinderCommonRareByte(t *testing.T) {
	pat := []byte("qqjqz")
	for _, hay := range []string{
		strings.Repeat("qqjq_", 5000) + "qqjqz" + strings.Repeat("q", 100),
		strings.Repeat("zjq", 5000) + "qqjqz",
		strings.Repeat("qqjq_", 5000),
		strings.Repeat("j", rareSpan*rareMinFalse) + "qqjqz",
	} {
		if got, want := newFinder(pat).index([]byte(hay)), bytes.Index([]byte(hay), pat); got != want {
			t.Errorf("index in %d bytes = %d, want %d", len(hay), got, want)
		}
	}
}

func FuzzFinder(f *testing.F) {
	f.Add(bytes.Repeat([]byte("zjq"), 200), []byte("qqjqz"))
	f.Add([]byte("the quick brown fox"), []byte("brown"))
	f.Add([]byte("aaaaab"), []byte("aab"))
	f.Add([]byte("abcabcabd"), []byte("abcabd"))
	f.Fuzz(func(t *testing.T, hay, pat []byte) {
		if len(pat) == 0 {
			return
		}
		if got, want := newFinder(pat).index(hay), bytes.Index(hay, pat); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d", hay, pat, got, want)
		}
	})
}
