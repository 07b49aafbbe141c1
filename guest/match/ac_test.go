package match

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestACFindsFirstEnd compares the automaton with a naive search: the
// occurrence that ends first, folded or not.
func TestACFindsFirstEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcAB\u212a"[r.IntN(5)]
		}
		return b
	}
	for round := 0; round < 300; round++ {
		fold := round%2 == 1
		var lits [][]byte
		for k := 1 + r.IntN(40); k > 0; k-- {
			l := word(1 + r.IntN(5))
			if fold {
				l = bytes.ToLower(l)
			}
			lits = append(lits, l)
		}
		a := newAC(lits, fold)
		text := word(200)
		for from := 0; from < len(text); from += 7 {
			want, wantEnd := -1, 1<<30
			hay := text[from:]
			if fold {
				hay = bytes.ToLower(hay)
			}
			for _, l := range lits {
				if i := bytes.Index(hay, l); i >= 0 && i+len(l) < wantEnd {
					want, wantEnd = i, i+len(l)
				}
				// Any occurrence ending earlier than the first of l.
				for i := 0; i+len(l) <= len(hay) && i+len(l) < wantEnd; i++ {
					if bytes.Equal(hay[i:i+len(l)], l) {
						want, wantEnd = i, i+len(l)
					}
				}
			}
			got := a.index(text[from:])
			if want < 0 && got >= 0 || want >= 0 && (got < 0 || got+0 > want+len(text)) {
				t.Fatalf("lits %q fold %v text %q: index %d, want %d", lits, fold, text[from:], got, want)
			}
			if got >= 0 {
				// got must start an occurrence ending at wantEnd.
				ok := false
				for _, l := range lits {
					if got+len(l) == wantEnd && bytes.Equal(hay[got:got+len(l)], l) {
						ok = true
					}
				}
				if !ok {
					t.Fatalf("lits %q fold %v text %q: index %d is not the occurrence ending first (at %d)", lits, fold, text[from:], got, wantEnd)
				}
			}
		}
	}
}

// keywordList is an alternation of n made-up words, some with k and s
// (whose (?i) forms include the Kelvin sign and the long s).
func keywordList(n int) string {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	var w []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := 2 + r.IntN(7); k > 0; k-- {
			b.WriteByte("abcdefghijklmnopqrstuvwxyz"[r.IntN(26)])
		}
		w = append(w, b.String())
	}
	return strings.Join(w, "|")
}

// keywordText is text that holds some of keywordList's words in every
// case and with the Kelvin sign and long s in place of k and s.
func keywordText(n int) []byte {
	words := strings.Split(keywordList(n), "|")
	r := rand.New(rand.NewPCG(2, 3))
	var b bytes.Buffer
	for line := 0; line < 400; line++ {
		for k := r.IntN(8); k > 0; k-- {
			w := words[r.IntN(len(words))]
			switch r.IntN(6) {
			case 0:
				w = strings.ToUpper(w)
			case 1:
				w = strings.ReplaceAll(w, "k", "\u212a")
			case 2:
				w = strings.ReplaceAll(w, "s", "\u017f")
			case 3:
				w = w[:len(w)/2] + "x"
			}
			fmt.Fprintf(&b, "%s%s ", w, []string{"", ",", "_", "9"}[r.IntN(4)])
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestKeywordLists checks large alternations (Aho-Corasick, exact or as a
// prefilter) against regexp, plain, folded and inside other syntax.
func TestKeywordLists(t *testing.T) {
	sizes := []int{9, 100, 300}
	if runtime.GOOS == "wasip1" {
		sizes = sizes[:2] // regexp, the reference, is slow there
	}
	for _, n := range sizes {
		text := keywordText(n)
		k := keywordList(n)
		for _, p := range []string{k, `\b(` + k + `)\b`, `(` + k + `)\(`, `^(` + k + `)`} {
			m, err := Compile(p, false)
			if err != nil {
				t.Fatal(err)
			}
			if m.pre == nil || m.pre.ac == nil {
				t.Errorf("%d words, %.20s...: no Aho-Corasick prefilter", n, p)
			}
			check(t, p, false, text)
			check(t, p, true, text)
		}
		if m, _ := Compile(k, true); !m.pre.exact {
			t.Errorf("(?i) list of %d words: not exact", n)
		}
	}
}

// TestFoldedLiteralExact: (?i) of a word with k or s is found exactly (its
// Kelvin sign and long s forms listed), and Start on a long line finds it.
func TestFoldedLiteralExact(t *testing.T) {
	m, err := Compile("endmark", true)
	if err != nil || m.pre == nil || !m.pre.exact {
		t.Fatalf("(?i)endmark: %v, not an exact prefilter", err)
	}
	text := []byte("x ENDMARK y\nendmar\u212a\nendmar\nEndMaRk\n" + strings.Repeat("ab ", 3000) + "endmark" + strings.Repeat(" cd", 10) + "\n")
	check(t, "endmark", true, text)
	long := text[bytes.LastIndexByte(text[:len(text)-1], '\n')+1:]
	if got := m.Start(long); got != 9000 {
		t.Errorf("Start on a long line = %d, want 9000", got)
	}
}

// TestDensePrefilterDropped: an Aho-Corasick prefilter whose candidate
// lines hold most of the text (keywords inside longer words, for
// `\b(...)\b`) is dropped for the DFA's scan once judged, and the lines
// found are still regexp's, before and after the switch; a sparse one
// stays. (It judges every 16 KiB here, not every preJudgeBytes: regexp,
// the reference, is slow on this pattern under wasm.)
func TestDensePrefilterDropped(t *testing.T) {
	const judge = 16 << 10
	pat := `\b(` + keywordList(300) + `)\b`
	dense := bytes.Repeat(keywordText(300), 1+3*judge/len(keywordText(300)))
	m, err := Compile(pat, false)
	if err != nil {
		t.Fatal(err)
	}
	m.preJudge = judge
	if m.pre == nil || m.pre.ac == nil || m.pre.exact {
		t.Fatalf("%s: no Aho-Corasick prefilter to judge", pat[:40])
	}
	got := gotLines(t, m, dense)
	if want := refLines(m.Regexp(), dense); !slices.Equal(got, want) {
		t.Errorf("dense text: %d lines, regexp %d", len(got), len(want))
	}
	if !m.preOff {
		t.Errorf("dense text: the prefilter was kept")
	}

	// One line in 64 holds keywords.
	kw := keywordText(300)
	kwLines := bytes.Split(kw[:bytes.LastIndexByte(kw, '\n')], []byte("\n"))
	var sparse []byte
	for i := 0; len(sparse) < 3*judge; i++ {
		if i%64 == 0 {
			sparse = append(append(sparse, kwLines[(i/64)%len(kwLines)]...), '\n')
			continue
		}
		sparse = append(sparse, "0123456789 -- 0123456789 -- 0123456789 -- 0123456789\n"...)
	}
	m, _ = Compile(pat, false)
	m.preJudge = judge
	got = gotLines(t, m, sparse)
	if want := refLines(m.Regexp(), sparse); !slices.Equal(got, want) {
		t.Errorf("sparse text: %d lines, regexp %d", len(got), len(want))
	}
	if m.preOff {
		t.Errorf("sparse text: the prefilter was dropped")
	}
}
