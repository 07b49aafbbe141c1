package redact

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// TestKeywordFinder: the keyword pass finds exactly what an Aho-Corasick
// walk over the lower-cased text finds (the library gitleaks uses, as the
// reference), every rule's keyword is one it can find (two bytes or
// more, lower case), and texts are random mixes of keywords, their
// pieces, upper case and other bytes.
func TestKeywordFinder(t *testing.T) {
	r := New()
	var list []string
	seen := map[string]bool{}
	for _, ru := range r.rules {
		for _, k := range ru.keywords {
			if len(k) < 2 || strings.ToLower(k) != k {
				t.Errorf("rule %s: keyword %q cannot be found", ru.id, k)
			}
			if !seen[k] {
				seen[k] = true
				list = append(list, k)
			}
		}
	}
	kf := newKeywordFinder(list)
	trie := ahocorasick.NewTrieBuilder().AddStrings(list).Build()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var b strings.Builder
		for b.Len() < rng.IntN(400) {
			switch rng.IntN(4) {
			case 0:
				k := list[rng.IntN(len(list))]
				b.WriteString(k[:1+rng.IntN(len(k))])
			case 1:
				b.WriteString(strings.ToUpper(list[rng.IntN(len(list))]))
			case 2:
				b.WriteByte(byte(rng.IntN(256)))
			default:
				b.WriteString(list[rng.IntN(len(list))])
			}
		}
		text := b.String()
		type hit struct{ start, pattern int }
		var got, want []hit
		kf.each(text, func(s, p int) { got = append(got, hit{s, p}) })
		low := []byte(text)
		for i, c := range low {
			low[i] = fold(c)
		}
		trie.Walk(low, func(end, n, p int64) bool {
			want = append(want, hit{int(end - n + 1), int(p)})
			return true
		})
		cmp := func(a, b hit) int {
			if a.start != b.start {
				return a.start - b.start
			}
			return a.pattern - b.pattern
		}
		slices.SortFunc(got, cmp)
		slices.SortFunc(want, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("text %q: found %v, the walk %v", text, got, want)
		}
	}
}

// BenchmarkKeywords: the keyword pass against the Aho-Corasick walk over
// a lower-cased copy it replaced, on this repository's Go source.
func BenchmarkKeywords(b *testing.B) {
	r := New()
	text := sample(1 << 20)
	var list []string
	seen := map[string]bool{}
	for _, ru := range r.rules {
		for _, k := range ru.keywords {
			if !seen[k] {
				seen[k] = true
				list = append(list, k)
			}
		}
	}
	kf := newKeywordFinder(list)
	trie := ahocorasick.NewTrieBuilder().AddStrings(list).Build()
	b.Run("finder", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			n := 0
			kf.each(text, func(int, int) { n++ })
		}
	})
	b.Run("aho-corasick", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		low := make([]byte, len(text))
		for b.Loop() {
			for i := 0; i < len(text); i++ {
				low[i] = fold(text[i])
			}
			n := 0
			trie.Walk(low, func(int64, int64, int64) bool { n++; return true })
		}
	})
}
