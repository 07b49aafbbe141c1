package match

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// TestClassSeqIndex compares classSeq.index with trying every offset, for
// random runs of classes over random text of a few bytes.
func TestClassSeqIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab-0Z\n"
	for round := 0; round < 3000; round++ {
		classes := make([]byteClass, 1+rng.IntN(9))
		for j := range classes {
			for _, c := range []byte(alphabet) {
				classes[j][c] = rng.IntN(3) == 0
			}
		}
		q := newClassSeq(classes)
		text := make([]byte, rng.IntN(60))
		for i := range text {
			text[i] = alphabet[rng.IntN(len(alphabet))]
		}
		want := -1
		for s := 0; s+len(classes) <= len(text) && want < 0; s++ {
			want = s
			for j := range classes {
				if !classes[j][text[s+j]] {
					want = -1
					break
				}
			}
		}
		if got := q.index(text); got != want {
			t.Fatalf("classes %v over %q: index %d, want %d", classes, text, got, want)
		}
	}
}

// TestSeqOf pins the run of byte classes found in a pattern: its length,
// and whether the pattern is that run and nothing more (exact).
func TestSeqOf(t *testing.T) {
	for _, c := range []struct {
		pattern string
		n       int
		exact   bool
	}{
		{`[A-Z_]{12,}`, 12, true},
		{`[0-9a-f]{40}`, 40, true},
		{`[0-9]{4}-[0-9]{2}-[0-9]{2}`, 10, true},
		{`\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`, 10, false},
		{`x[0-9]+y`, 2, false},          // x[0-9] and [0-9]y
		{`[A-Z]+[0-9]{4}`, 5, false},    // [A-Z][0-9]{4}, but a match starts before it
		{`[a-z]{3}.[0-9]{5}`, 5, false}, // '.' matches any rune
		{`(?i)ab[a-z]{3}`, 2, false},    // the folded class holds K and ſ
		{`(?i)sk[0-9]{3}`, 3, false},    // s and k have forms beyond ASCII
		{`[a-c]{70}`, maxSeq, false},    // cut to maxSeq
		{`(ab){2}[0-9]{2,}x`, 6, false}, // abab[0-9][0-9], then [0-9][0-9]x
		{`ab(c|d)[0-9]{4}`, 7, true},    // (c|d) is the class [c-d]
		{`ab(c|de)[0-9]{4}`, 4, false},
		{`é[0-9]{4}`, 4, false},
		{`^[0-9]{4}$`, 4, false},
		{`[0-9]{2}x*`, 2, true},
	} {
		tree, err := syntax.Parse(c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		s := seqOf(trimEnd(withoutNewlines(tree)))
		if len(s.best) != c.n || (s.fixed && !s.asserts) != c.exact {
			t.Errorf("%s: run of %d (exact %v), want %d (exact %v)", c.pattern, len(s.best), s.fixed && !s.asserts, c.n, c.exact)
		}
	}
}

// TestSeqPrefilter checks patterns whose prefilter is a run of byte
// classes (or a folded literal's) against regexp, with runs at the ends of lines and of a long
// line (where Start asks the prefilter), cut by newlines and invalid
// bytes, and many runs too short.
func TestSeqPrefilter(t *testing.T) {
	text := "-01-31 2024-01-31\n- -- 1-2 9999-99-9 -2024-01-31- 12:3 12:34 x-12 x-123 ab-1\n" +
		strings.Repeat("-", 100) + "1999-12-31\\x1g\\x1f\n" + "ABCDEFGHIJK_ short\nABCDEFGHIJKL at start\nend ABCDEFGHIJKL\nAB_CD\xffEFGHIJKLMN\nABCDEF\nGHIJKLMN\n" +
		"2024-01-31 x\n2024-01-3\n12024-01-311\nab-12-34 0000-00-00\n\u212aABCDEFGHIJKLM \u017fTRASSE_STRASSE\n" +
		strings.Repeat("ABCDEFGHIJK a", 400) + "ZZZZZZZZZZZZZZ a\u017f\u017fESS \u212aelVIN\n" + strings.Repeat("0123456789abcdef ", 10) + "\n" +
		strings.Repeat("deadbeef", 5) + "\nsk123 SK123 \u017f\u212a123\n2024-02-29"
	// A literal ("sk") is looked for instead where there is one, or with
	// the run where the run holds it ('-', "x-", ':': runAround).
	for p, seq := range map[string]bool{`[A-Z_]{12,}`: true, `[0-9]{4}-[0-9]{2}-[0-9]{2}`: true, `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`: true,
		`x-[0-9]{3}`: true, `[0-9]{2}:[0-9]{2}\b`: true, `\\x[0-9a-f]{2}`: true, `[a-z]+-[0-9]`: false,
		`[0-9a-f]{40}`: true, `[A-Z]+[0-9]{4}`: true, `(?i)[a-z]{12}`: false, `(?i)sk[0-9]{3}`: false, `[A-Z]{6}$`: true,
		`^[A-Z]{6}`: true, `[a-f0-9]{16,} `: true,
		// Folded literals (foldLit), exact: on the long line Start asks
		// the prefilter.
		`(?i)kelvin`: false, `(?i)assess`: false, `(?i)zzzzzz`: false} {
		m, err := Compile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.pre != nil && m.pre.seq != nil; got != seq {
			t.Errorf("%s: run prefilter %v, want %v", p, got, seq)
		}
		for _, ic := range []bool{false, true} {
			check(t, p, ic, []byte(text))
			check(t, p, ic, []byte(strings.ReplaceAll(text, "\n", "\r\n")))
		}
	}
}

// TestFoldLitIndex compares foldLit.index with regexp's leftmost match of
// the folded literal, over random text of pieces of its forms (the Kelvin
// sign, the long s, both cases), parts of them (invalid UTF-8) and other
// bytes, long enough to pass the scan's unrolled loop and its end.
func TestFoldLitIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"k", "K", "\u212a", "s", "S", "\u017f", "e", "L", "v", "I", "n", "a", "o", "d", "T", ".", "-", "ve", "LV", "a.v",
		"\xc5", "\xbf", "\xe2\x84", "\xaa", "x", " ", "\n", "kelvin", "as\u017fe", "\u00df"}
	for _, lit := range []string{"kelvin", "assess", "kkskSK", "ssss", "todo", "elvis", "Kas\u017fa", "a.v-i", "ve.ve"} {
		tree, err := syntax.Parse(lit, syntax.Perl|syntax.FoldCase|syntax.Literal)
		if err != nil {
			t.Fatal(err)
		}
		f := newFoldLit(tree.Rune)
		if f == nil {
			t.Fatalf("%s: no foldLit", lit)
		}
		// Both ways of finding it: by a pair of its runes (a forced one
		// when none is rare enough), and by the run search.
		pair, bySeq := *f, *f
		bySeq.pair = nil
		if pair.pair == nil {
			pair.pair = newFoldPair(f.forms, 2)
		}
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(lit))
		for round := 0; round < 2000; round++ {
			var b strings.Builder
			for k := rng.IntN(80); k > 0; k-- {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			text := []byte(b.String())
			want := -1
			if loc := re.FindIndex(text); loc != nil {
				want = loc[0]
			}
			for _, f := range []*foldLit{&pair, &bySeq} {
				if got := f.index(text); got != want {
					t.Fatalf("%s (pair %v, back %v) in %q: index %d, want %d", lit, f.pair != nil, f.back, text, got, want)
				}
			}
		}
	}
}

// TestFoldPairIndex compares foldPair.index with a byte loop over texts
// of the pair's bytes, their other case, and the bytes one above them
// (which raise false flags in the word test, above a true one).
func TestFoldPairIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, lit := range []string{"lv", "l.", ".v", "-."} {
		tree, err := syntax.Parse(lit, syntax.Perl|syntax.FoldCase|syntax.Literal)
		if err != nil {
			t.Fatal(err)
		}
		forms := newFoldLitForms(tree.Rune)
		p := newFoldPair(forms, 2)
		alphabet := []byte{lit[0], lit[1], lit[0] ^ 1, lit[1] ^ 1, upper(lit[0]), upper(lit[1]), upper(lit[0]) ^ 1, 'x', 0xff}
		for round := 0; round < 3000; round++ {
			text := make([]byte, rng.IntN(120))
			for i := range text {
				text[i] = alphabet[rng.IntN(len(alphabet))]
			}
			want := -1
			for i := 0; i+1 < len(text) && want < 0; i++ {
				if slices.ContainsFunc(forms[0], func(f []byte) bool { return f[0] == text[i] }) &&
					slices.ContainsFunc(forms[1], func(f []byte) bool { return f[0] == text[i+1] }) {
					want = i
				}
			}
			if got := p.index(text); got != want {
				t.Fatalf("%q in %q: index %d, want %d", lit, text, got, want)
			}
		}
	}
}
