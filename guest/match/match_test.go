package match

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// refLines is the reference: the pattern compiled by regexp and run on
// each line alone (lines split at '\n'; text after the last '\n' is a line
// when not empty). It returns the matching lines' numbers, from 0.
func refLines(re *regexp.Regexp, text []byte) []int {
	var hits []int
	lines := bytes.Split(text, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.Match(l) {
			hits = append(hits, i)
		}
	}
	return hits
}

// gotLines runs m.Next over text the way grep does and returns the
// matching lines' numbers.
func gotLines(t testing.TB, m *Matcher, text []byte) []int {
	var hits []int
	line, pos := 0, 0
	for pos < len(text) {
		s, e, ok := m.Next(text[pos:])
		if !ok {
			break
		}
		s, e = s+pos, e+pos
		if s > 0 && text[s-1] != '\n' || e < len(text) && text[e] != '\n' || s > e {
			t.Fatalf("Next returned [%d,%d), not a line of %q", s, e, text)
		}
		line += bytes.Count(text[pos:s], []byte("\n"))
		hits = append(hits, line)
		pos = e + 1
		line++
	}
	return hits
}

// check compares the matcher with regexp line by line; ref is compiled
// from pattern (with (?i) when ignoreCase).
func check(t testing.TB, pattern string, ignoreCase bool, text []byte) {
	ref := pattern
	if ignoreCase {
		ref = "(?i)" + pattern
	}
	re, err := regexp.Compile(ref)
	m, merr := Compile(pattern, ignoreCase)
	if merr != nil && strings.Contains(merr.Error(), "surrogate") {
		return // refused on purpose (TestSurrogatesRefused)
	}
	if merr != nil && strings.HasPrefix(merr.Error(), "pattern is too large: ") {
		return // past MaxProgInsts, refused on purpose (guest/tools TestGrepPatternTooLarge)
	}
	if (err == nil) != (merr == nil) {
		t.Fatalf("Compile(%q): %v; regexp: %v", pattern, merr, err)
	}
	if err != nil {
		return
	}
	want := refLines(re, text)
	got := gotLines(t, m, text)
	if m.EveryLine() {
		// Counted as lines: regexp must match every line, whatever it holds.
		for _, l := range bytes.Split(text, []byte("\n")) {
			if !re.Match(l) {
				t.Fatalf("pattern %q (ignore case %v): EveryLine, but regexp does not match %q", pattern, ignoreCase, l)
			}
		}
	}
	for _, l := range bytes.Split(text, []byte("\n")) {
		w := -1
		if loc := m.Regexp().FindIndex(l); loc != nil {
			if len(l) > maxRegexpLine && loc[1]-loc[0] >= startWindow {
				continue // Start is a hint there (see Start); TestReverseInner holds it to what it was
			}
			w = loc[0]
		}
		if s := m.Start(l); s != w {
			t.Errorf("pattern %q (ignore case %v): Start(%q) = %d, regexp finds %d", pattern, ignoreCase, l, s, w)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pattern %q (ignore case %v) on %q:\n got lines %v\nwant lines %v", pattern, ignoreCase, text, got, want)
	}
	if m.rev != nil {
		checkRevInner(t, pattern, ignoreCase, text)
	}
}

// checkRevInner holds the reverse inner literal strategy (revinner.go),
// used on lines of any length, to regexp on every line of text, and of
// text made one line when it is short enough for regexp to decide
// quickly; and it holds revEnd, where it answers, to dfa.first over the
// whole line.
func checkRevInner(t testing.TB, pattern string, ignoreCase bool, text []byte) {
	texts := [][]byte{text}
	if len(text) <= 64<<10 {
		texts = append(texts, bytes.ReplaceAll(text, []byte("\n"), []byte(" ")))
	}
	for _, text := range texts {
		m, err := Compile(pattern, ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		m.revMin, m.rev.spacing = 0, 0
		re := m.Regexp()
		if got, want := gotLines(t, m, text), refLines(re, text); !slices.Equal(got, want) {
			t.Errorf("pattern %q (ignore case %v), reverse inner literal on every line of %q:\n got lines %v\nwant lines %v", pattern, ignoreCase, text, got, want)
		}
		ref, _ := Compile(pattern, ignoreCase)
		ref.dfa.noFail = true
		for _, l := range bytes.Split(text, []byte("\n")) {
			at, res := m.rev.decide(l, 0)
			switch {
			case res == dfaFailed:
				continue
			case res != dfaMatch && res != dfaNoMatch:
				t.Fatalf("pattern %q: decide(%q) = %d", pattern, l, res)
			case (res == dfaMatch) != re.Match(l):
				t.Errorf("pattern %q (ignore case %v): decide(%q) = %d, regexp says %v", pattern, ignoreCase, l, res, re.Match(l))
			}
			if res != dfaMatch || len(l) == 0 {
				continue
			}
			end, eres := m.revEnd(l, at)
			wend, wres := ref.dfa.first(l)
			if eres != dfaFailed && (eres != wres || end != wend) {
				t.Errorf("pattern %q (ignore case %v): revEnd(%q, %d) = %d, %d; first finds %d, %d", pattern, ignoreCase, l, at, end, eres, wend, wres)
			}
		}
	}
}

const tricky = "alpha beta\n\nGamma delta\n  indented line\nend.\nfoo\tbar\nfoo\nbar\r\n" +
	"Ärger über Öl\nx\n\nthe \u212Aelvin sign\nlong \u017Fs\nΑλφα βήτα γάμμα\n" +
	"bad \xff byte\nhalf \xce rune\nxxxx\n" + "2024-01-31 date\n" +
	"Errorf( and Fatalf(\nt.Errorf(\"x\")\nTODO: fix\n// todo later\n" +
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890\n" +
	"한국어 텍스트 검색 日本語のテキスト Ελληνικά\n" +
	"last line without newline"

func TestTricky(t *testing.T) {
	for _, p := range []string{
		// Empty pattern and empty matches.
		"", "x*", "(?:)", "a*", "^", "$", "^$", `\b`, `\B`, `^\B$`,
		// Case folding: the Kelvin sign and long s fold with k and s.
		"k", "K", "kelvin", "KELVIN", "s", "ss", "long ſs", "(?i)k", "(?i)ſ",
		"(?i)assess", "(?i)kelvin", "(?i)sss", "(?i)SK", "(?i)ssss", "(?i)kkkk",
		// Unicode classes.
		`\p{Greek}+`, `\p{Greek}`, `\pL+`, `[^\x00-\x7f]`, `\PL`, `ü`, `(?i)ärger`, `(?i)ÄRGER`,
		// Other scripts.
		`[^ ]{5,}`, `\p{Hangul}+`, `[가-힣]{3}`, `검색$`, `(?i)ελληνικά`, `\p{Han}.\p{Hiragana}`,
		// Counted repetition.
		`.{80,}`, `.{20,30}`, `^.{0,3}$`, `a{2,}`, `x{4}`, `[0-9]{4}-[0-9]{2}-[0-9]{2}`,
		// Anchors and word boundaries.
		"^a", "a$", `\Aa`, `e\z`, `(?m)^foo$`, `^Gamma`, `line$`, `without newline$`,
		`\bbar\b`, `\w+ta\b`, `over\b`, `\bfoo`, `\Bta`, `^\w+$`, `\r$`, `bar\r`, `bar$`,
		// Invalid UTF-8: regexp matches U+FFFD (and '.') against an invalid byte.
		`\x{FFFD}`, `bad . byte`, `half . rune`, `[^a-z ]`, `\xff`,
		// Newlines can never match within a line.
		`foo\nbar`, `[\n]`, `[^\n]`, `(?s).+`, `\s+`, `foo\s+bar`, `[[:space:]]`,
		// Alternations, literals, classes.
		`(Errorf|Fatalf)\(`, `Errorf|Fatalf`, `todo|fixme`, `(?i)todo`, `TODO`, `x|^$`,
		`\D\d`, `[a-z]+ line`, `al(pha)+ beta`, `ent.*line`, `(foo|bar)$`, `e.d`,
		"a|b|c|d|e|f|g|h|i|j", `(?i)(errorf|fatalf)\(`,
		// Invalid patterns fail as regexp fails.
		`(`, `[z-a]`, `x{1001}`,
	} {
		for _, ic := range []bool{false, true} {
			check(t, p, ic, []byte(tricky))
			check(t, p, ic, []byte(strings.ReplaceAll(tricky, "\n", "\r\n")))
			check(t, p, ic, nil)
			check(t, p, ic, []byte("\n"))
			check(t, p, ic, []byte("\n\n"))
		}
	}
}

// foldText holds the forms beyond ASCII of k and s (the Kelvin sign, the
// long s) in and out of the literals that fold to them, and ß.
const foldText = "a\u017f\u017fe\u017f\u017f ASSESS\naSsEsS x\nasses\u017f\nasse\u017f\n\u017f alone\n\u212a alone\n" +
	"s\u212a S\u212a \u017fk SK\nsss \u00df\u017fS \u1e9e\nthe \u212aELVIN sign, kelvin\nsssk \u017f\u017f\u017f\u212a\nnone here\n" +
	"asses\xc5 asse\xbf \xe2\x84 \u017f"

// TestFoldLit: a folded ASCII literal of four bytes or more is found in
// one pass over the bytes its forms can hold (newFoldLit), a shorter one
// or one beyond ASCII as a set of literals, and finds what regexp finds.
func TestFoldLit(t *testing.T) {
	for _, c := range []struct {
		pattern    string
		ignoreCase bool
		kind       string // the prefilter: fold or set
	}{
		{`(?i)assess`, false, "fold"}, {`assess`, true, "fold"}, {`(?i)ssss`, false, "fold"}, {`(?i)kkskSK`, false, "fold"},
		{`(?i)kelvin`, false, "fold"}, {`(?i)sss`, false, "set"}, {`(?i)SK`, false, "set"}, {`(?i)ſ`, false, "set"},
		{`(?i)aſſeſſ`, false, "fold"}, {`(?i)ass
ess`, false, "set"}, {`(?i)sks`, false, "set"}, {`(?i)todo`, false, "fold"},
		{`(?i)traße`, false, "set"}, {`(?i)s.ss`, false, "set"},
	} {
		m, err := Compile(c.pattern, c.ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		kind := "set"
		if m.pre != nil && m.pre.fold != nil {
			kind = "fold"
		}
		if kind != c.kind {
			t.Errorf("%s: prefilter %s, want %s", c.pattern, kind, c.kind)
		}
		for _, text := range []string{foldText, strings.Repeat("x", 300) + foldText, strings.ReplaceAll(foldText, "\n", " ")} {
			check(t, c.pattern, c.ignoreCase, []byte(text))
		}
	}
}

// TestFoldOrbits pins the fact the prefilter relies on: of the ASCII
// letters only k and s have case variants beyond ASCII.
func TestFoldOrbits(t *testing.T) {
	var got []rune
	for r := rune(0); r < 0x80; r++ {
		if !asciiOrbit(r) {
			got = append(got, r)
		}
	}
	if string(got) != "KSks" {
		t.Errorf("letters with non-ASCII case variants: %q", string(got))
	}
}

// TestCacheOverflow runs a pattern whose DFA needs far more states than the
// cache holds, so the cache is dropped and the DFA gives up for regexp.
func TestCacheOverflow(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		for j := 0; j < 40; j++ {
			b.WriteByte("ab"[(i*7+j*13+i*j)%2])
		}
		b.WriteByte('\n')
	}
	text := []byte(b.String())
	for _, p := range []string{`[ac][ab]{12}[cd]`, `[ab]{6}[cd]|b[ab]{8}a$`, `[ac][ab]{12}[bc]`, `[ac][ab]{10}[bc]$`, `[bc][ab]{5}[ac]`} {
		for _, states := range []int{maxStates, 200, 20} {
			m, err := Compile(p, false)
			if err != nil {
				t.Fatal(err)
			}
			m.dfa.maxStates = states
			want := refLines(m.Regexp(), text)
			if got := gotLines(t, m, text); !slices.Equal(got, want) {
				t.Errorf("%s with %d states: got %d lines, want %d", p, states, len(got), len(want))
			}
			t.Logf("%s, %d states: failed %v, %d times in a row", p, states, m.dfa.failed, m.dfa.failures)
		}
	}
}

func FuzzMatchesRegexp(f *testing.F) {
	for _, p := range []string{"", "x*", `\p{Greek}+`, "(?i)k", `.{80,}`, `\)$`, `\bfoo\b`, `(Errorf|Fatalf)\(`,
		`[0-9]{4}-[0-9]{2}`, "^$", `(?i)todo`, `\B`, `ſ`, `a.c`} {
		f.Add(p, false, tricky)
		f.Add(p, true, "x\n\xff\n"+tricky[:40])
	}
	// The classes of issue 34: every line, many hits, a hex class counted,
	// letters with folded forms beyond ASCII (s, ß, k).
	for _, p := range []string{`^`, `$`, `.?`, `.*`, `[0-9a-f]{40}`, `0x[0-9a-fA-F]{8,}`, `(?i)traße`, `(?i)kelvin`, `(?i)assess`, `(?i)ſtraSSe`} {
		f.Add(p, false, tricky)
		f.Add(p, true, cliffText+"STRASSE stra\u017fe stra\u00dfe \u212aelvin\n"+strings.Repeat("0123456789abcdef", 3)+"\n")
	}
	// Folded literals with many forms (the long s, the Kelvin sign; see
	// newFoldLit).
	for _, p := range []string{`(?i)assess`, `(?i)kelvin`, `(?i)ſ`, `(?i)sss`, `(?i)SK`, `(?i)kkskSK`, `(?i)kaſſa`, `(?i)elvis`, `(?i)todo`, `(?i)ssss`} {
		f.Add(p, false, foldText)
		f.Add(p, true, foldText[20:])
	}
	// The hex and counted classes of issue 34, and the regexes over one
	// line of minified JSON.
	json := `[{"id":1,"sha":"3f786850e387550fdab836ed7e6dc881de23001b","ok":true},{"id":2,"last":true}]` + "\n2024-01-31 MAX_LINE_BYTES \\x1b 0xDEADBEEF1\n"
	for _, p := range []string{`\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`, `[A-Z_]{12,}`, `\\x[0-9a-f]{2}`, `"id":[0-9]+,"last":true`, `"sha":"[0-9a-f]{40}"`,
		// Runs of byte classes (classSeq).
		`[a-z]{5}`, `[A-Z]+[0-9]{4}`, `[a-f0-9]{16,} `, `[0-9]{4}$`, `\b[A-Z_]{6}`, `(?i)ab[a-z]{3}`} {
		f.Add(p, false, json)
		f.Add(p, true, tricky)
	}
	// The cliff classes of issue 22 (see cliffPatterns).
	for _, p := range cliffPatterns(20) {
		if len(p) <= 200 {
			f.Add(p, false, tricky)
			f.Add(p, true, cliffText)
		}
	}
	// Patterns around an inner literal, with assertions next to it or not
	// (see revPatterns; check runs the reverse inner literal strategy on
	// every line, and on the text made one line).
	rt := string(revText())
	for _, c := range revPatterns {
		f.Add(c.pattern, false, rt[:min(len(rt), 3000)])
		f.Add(c.pattern, true, "abc abc abc x"+strings.Repeat("yz abc ", 20)+"\nLIT lit\n")
	}
	for _, p := range []string{`\bLIT[0-9]`, `LIT\b`, `^[a-z ]*LIT`, `[a-z ]*LIT$`, `x\B[a-z]*abc`} {
		f.Add(p, false, "x LIT1 aLIT2 LIT3b\nabc LIT\n"+strings.Repeat("abc ", 50)+"xabc\n")
	}
	f.Fuzz(func(t *testing.T, pattern string, ignoreCase bool, text string) {
		if len(pattern) > 200 || len(text) > 4000 {
			return
		}
		check(t, pattern, ignoreCase, []byte(text))
	})
}

// TestPrefilterLeftmost checks that the prefilter finds the leftmost
// occurrence of any of its literals, with scans and with Horspool.
func TestPrefilterLeftmost(t *testing.T) {
	for _, c := range []struct {
		pattern string
		ic      bool
	}{{`xxxxxA|Bzz`, false}, {`(Errorf|Fatalf)\(`, false}, {`todo|fixme`, true}, {`abcd|wxyz`, true}, {`ab|cd`, false}} {
		m, err := Compile(c.pattern, c.ic)
		if err != nil || m.pre == nil {
			t.Fatalf("%s: no prefilter (%v)", c.pattern, err)
		}
		// Text dense in every scan byte, so that the scan gives up for
		// Horspool, with the literals at varying places.
		var b strings.Builder
		for i := 0; i < 400; i++ {
			b.WriteString(string(m.pre.scan))
			b.WriteString(" ")
			if i%37 == 5 {
				b.WriteString("xxxxxA errorf( Fatalf( FIXME tOdO ABCD cd\n")
			}
			if i%53 == 7 {
				b.WriteString("Bzz\n")
			}
		}
		check(t, c.pattern, c.ic, []byte(b.String()))
		text := []byte(b.String())
		for from := 0; from < len(text); from += 97 {
			want := -1
			for _, l := range m.pre.lits {
				var k int
				if l.fold {
					k = bytes.Index(bytes.ToLower(text[from:]), l.b)
				} else {
					k = bytes.Index(text[from:], l.b)
				}
				if k >= 0 && (want < 0 || k < want) {
					want = k
				}
			}
			if got := m.pre.index(text[from:]); got != want {
				t.Errorf("%s: index from %d = %d, want %d", c.pattern, from, got, want)
			}
			if got := m.pre.horspool(text[from:]); got != want {
				t.Errorf("%s: horspool from %d = %d, want %d", c.pattern, from, got, want)
			}
		}
	}
}

// TestRequiredSet pins which literals the prefilter looks for.
func TestRequiredSet(t *testing.T) {
	for p, want := range map[string]string{
		`[A-Z]\w+_NOHIT\d`:  "_NOHIT",
		`foo.*barbaz`:       "barbaz",
		`(abc)+x`:           "abc",
		`(?:abcd){2}`:       "abcd",
		`(Errorf|Fatalf)\(`: "Errorf Fatalf",
		`(?i)todo`:          "todo/i",
		`(?i)kelvin`:        "elvin/i", // k also matches the Kelvin sign
		`(?i)ärger`:         "rger/i",
		"a\uFFFDbc":         "bc",
		`abc|x*`:            "",
		`(abc)?`:            "",
		`x*`:                "",
	} {
		tree, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		set, _ := requiredSet(withoutNewlines(tree))
		var got []string
		for _, l := range set {
			s := string(l.b)
			if l.fold {
				s = strings.ToLower(s) + "/i"
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("requiredSet(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestSurrogatesRefused: a pattern naming a UTF-16 surrogate is refused
// with a clear error (regexp answers ^\x{D800} and \x{D800} differently);
// classes that merely span them are fine.
func TestSurrogatesRefused(t *testing.T) {
	for _, p := range []string{`^\x{D800}`, `\x{DFFF}`, `[\x{D800}-\x{DBFF}]`, `[^\x{DC00}]`, `a|\x{D834}x`} {
		if _, err := Compile(p, false); err == nil || !strings.Contains(err.Error(), "surrogate") {
			t.Errorf("Compile(%q) = %v, want a surrogate error", p, err)
		}
	}
	for _, p := range []string{`[\x{D000}-\x{E000}]`, `[^a]`, `.`, `[^\x{D800}-\x{DFFF}]`} {
		if _, err := Compile(p, false); err != nil {
			t.Errorf("Compile(%q): %v", p, err)
		}
	}
}

// cliffPatterns are the classes of pattern that once cost 50-1000x
// ripgrep or ended in a host error (issue 22): many DFA states, leading
// [\s\S]*, repetitions counted to 1000, programs far over 2,000
// instructions, keyword lists (words of them), long-line literals and
// non-ASCII classes.
func cliffPatterns(words int) []string {
	return []string{`[a-q][^u-z]{13}x`, `[\s\S]*x.{30}y`, `(\w+\s*){1,500}`, `.{1000}.{1000}`, `.{10}.{10}`,
		`(\pL|\d){1,1000}x`, `\w{1,1000}x`, `\w{1,5}x`, `(?i)endmark`, `[^\x00-\x7f]`,
		keywordList(words), `\b(` + keywordList(words) + `)\b`, `(?i)(` + keywordList(words) + `)`, `^(` + keywordList(words) + `)$`}
}

// cliffText holds lines for the cliff patterns: letters in runs, an x
// then a y 30 runes on, a keyword or two, Latin-1 bytes, the Kelvin sign.
var cliffText = "abcdefghijklmnopqrstx and more\nqqqqqqqqqqqqqqx\n" +
	"x" + strings.Repeat("-", 30) + "y end\n" + strings.Repeat("w", 40) + "x\n" +
	"caf\xe9 cr\xe8me\n" + string(keywordText(20)[:200]) + "\nENDMARK endmark \u212Aey\n"

// TestStripDotStar: a leading or trailing .* is dropped for the DFA only
// where it changes no line's answer.
func TestStripDotStar(t *testing.T) {
	for p, want := range map[string]string{
		`[\s\S]*x.{30}y`: `(?-s:x.{30}y)`,
		`.*a.*`:          `a`,
		`(?s).*^a$.*`:    `(?m:^a$)`,
		`.*`:             `(?-s:.*)`,
		`a.*b`:           `(?-s:a.*b)`,
		`.+a`:            `(?-s:.+a)`,
	} {
		tree, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := stripDotStar(withoutNewlines(tree)).String(); got != want {
			t.Errorf("stripDotStar(%q) = %q, want %q", p, got, want)
		}
		check(t, p, false, []byte(tricky))
	}
}

// TestDotRunes: a pattern of "." alone is decided by counting runes, with
// invalid bytes one rune each as for regexp.
func TestDotRunes(t *testing.T) {
	text := []byte(strings.Repeat("a", 1999) + "\n" + strings.Repeat("é", 2000) + "\n" + strings.Repeat("\xff", 2000) + "\n" + strings.Repeat("b", 2500) + "\nshort\n")
	for _, p := range []string{`.{1000}.{1000}`, `.{1000,}.{1000}`, `(.{10}){20}.{900}.{900}`, `.+.{999}.{1000}`, `..*.{3}`} {
		m, err := Compile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		if m.dotRunes == 0 {
			t.Errorf("%s: not counted as dots", p)
		}
		check(t, p, false, text)
	}
	if m, _ := Compile(`.{10}x`, false); m.dotRunes != 0 {
		t.Error(".{10}x counted as dots")
	}
}

// TestDotRunesStrict: grep's strict "." (not U+FFFD) counts runs between
// U+FFFD runes.
func TestDotRunesStrict(t *testing.T) {
	p := `[^\n\x{FFFD}]{1000}[^\n\x{FFFD}]{1000}`
	m, err := Compile(p, false)
	if err != nil || m.dotRunes != 2000 || !m.dotNoFFFD {
		t.Fatalf("%v %d %v", err, m.dotRunes, m.dotNoFFFD)
	}
	text := []byte(strings.Repeat("a", 1500) + "\xff" + strings.Repeat("a", 1500) + "\n" + strings.Repeat("é", 2000) + "\uFFFD\n" + strings.Repeat("b", 999) + "\uFFFD" + strings.Repeat("b", 1001) + "\n")
	check(t, p, false, text)
}

func FuzzLastNewline(f *testing.F) {
	f.Add([]byte("abc\ndef"))
	f.Add([]byte("0123456789abcdef\n0123456789abcdef"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := LastNewline(b), bytes.LastIndexByte(b, '\n'); got != want {
			t.Fatalf("LastNewline(%q) = %d, want %d", b, got, want)
		}
	})
}

// TestStartAfterNext: on a line too long for regexp, Start right after
// the Next that returned the line (which reuses where the DFA found the
// match's end) answers what Start on that line alone answers.
func TestStartAfterNext(t *testing.T) {
	var text bytes.Buffer
	filler := func(n int) {
		for text.Len()%1000 != 0 || n > 0 {
			text.WriteString(`{"k":"v a_b",`)
			n--
		}
	}
	for _, hit := range []string{`"id":42,"last":true`, "0xdeadBEEF99", "3f786850e387550fdab836ed7e6dc881de23001b", "2024-01-31", "MAX_LINE_BYTES_X", "end of line x"} {
		filler(400)
		text.WriteString(hit)
		filler(300)
		text.WriteString("\n")
		filler(10)
		text.WriteString("\n")
	}
	text.WriteString(`^a starts "id":7,"last":true`)
	filler(500)
	for _, pat := range []string{`"id":[0-9]+,"last":true`, `0x[0-9a-fA-F]{8,}`, `[0-9a-f]{40}`, `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`, `[A-Z_]{12,}`, `_b",$`, `^\^a`, `k":"v a`, `(?i)LAST":TRUE`} {
		m, err := Compile(pat, false)
		if err != nil {
			t.Fatal(err)
		}
		b := text.Bytes()
		n := 0
		for pos := 0; pos < len(b); n++ {
			s, e, ok := m.Next(b[pos:])
			if !ok {
				break
			}
			line := b[pos+s : pos+e]
			got := m.Start(line)
			fresh, _ := Compile(pat, false)
			if want := fresh.Start(bytes.Clone(line)); got != want || got < 0 {
				t.Errorf("%q, hit %d (a line of %d bytes): Start after Next = %d, alone %d", pat, n, len(line), got, want)
			}
			pos += e + 1
		}
		if n == 0 {
			t.Errorf("%q: no line matched", pat)
		}
	}
}

// TestDenseAcceleration: on text where the bytes an accelerable state
// waits for come every few bytes (minified JSON), the scan turns its
// acceleration off for a while (accelCache.judge) and answers as regexp
// does, in short lines and in one line longer than the stretch it is
// off for, with hits before, inside and after that stretch.
func TestDenseAcceleration(t *testing.T) {
	var line bytes.Buffer
	for i := 0; line.Len() < 3*denseBytes; i++ {
		fmt.Fprintf(&line, `{"id":%d,"name":"W%dé","ok":%v},`, i, i%97, i%5 == 0)
		switch line.Len() / 1000 {
		case 3, 70, 150:
			line.WriteString(`{"id":9,"last":true},`)
		}
	}
	long := line.String()
	short := strings.ReplaceAll(long[:20000], "},{", "},\n{")
	// One hit in a line, inside the stretch scanned without acceleration,
	// at each place in the scan's steps of four bytes.
	var one strings.Builder
	for pad := range 4 {
		fmt.Fprintf(&one, "%s%s{\"u\":\"é%d\"},%s\n", long[:70000], strings.Repeat(" ", pad), pad, long[:30000])
	}
	for _, text := range []string{long, short, long + "\n" + short, short + "\n" + long[:150000] + `{"id":1,"last":true}`, one.String()} {
		for _, p := range []string{`"id":[0-9]+,"last":true`, `"nam[e]":"Zz`, `"ok":true\},\{"id":[0-9]*7,`, `é"`, `:"é`, `"u":"é[0-9]+"\}`, `"ok":(true|false)\},\{"id":[0-9]+,"n`, `\bW9\b`, `"id":1234[0-9],`} {
			check(t, p, false, []byte(text))
		}
	}
}

// revPatterns are patterns around an inner literal (revinner.go), with
// whether the reverse inner literal strategy applies to them (without
// (?i)): not with an assertion anywhere, nor without a literal worth
// searching for (a, b: bytes too common).
var revPatterns = []struct {
	pattern string
	applies bool
}{
	{`"id":[0-9]+,"last":true`, true}, {`a[0-9]*b`, false}, {`q[0-9]*z`, true}, {`x.*yz`, true}, {`(foo|bar)[0-9]+baz`, true},
	{`[a-z ]*LIT`, true}, {`x[a-z ]*abc`, true}, {`[a-z]+abc[a-z]+`, true}, {`(?i)x[a-z]*ABC\d`, true},
	{`é+ab\x{FFFD}c.é`, true}, {`[^a]ab[^c]`, true}, {`(abc)+abc`, true}, {`(?:ab|a)bcd(?:e|ef)?`, true},
	{`[a-z]{2,5}zz[0-9]{3}`, true}, {`.*x.*yz.*`, true}, {`(x.*yz)`, true}, {`\pL{2}ασ\pN`, true},
	// A match through a later occurrence that starts before the first
	// one's and ends before it (revEnd); occurrences that overlap.
	{`(bLaLc|a)L(.*8|[0-9])`, true}, {`(ab|cd)abab[YZ]`, true},
	{`\bfoo[0-9]+bar`, false}, {`^x.*yz`, false}, {`x.*yz$`, false}, {`a\Bbcd`, false},
	{`abc`, false}, {`a|bcd`, false}, {`[a-z]+`, false}, {`x*`, false},
}

// revText holds lines for revPatterns: many occurrences of their literals
// with and without matches around them, long runs that a backward scan
// would read again and again (`x[a-z ]*abc` over "abc abc abc"), invalid
// UTF-8 and runes beyond ASCII next to the literals.
func revText() []byte {
	var b strings.Builder
	b.WriteString(`[{"id":1,"ok":true},{"id":2,"last":false},{"id":,"last":true},{"id":12,"last":true},{"x":3}]` + "\n")
	b.WriteString(strings.Repeat("abc ", 300) + "xabc x abc\n")
	b.WriteString(strings.Repeat("abc ", 300) + "\n")
	b.WriteString("x" + strings.Repeat("yz", 200) + " zz yz x a12b ab a b a0b q12z qz q z\n")
	b.WriteString(strings.Repeat("foo12 bar baz ", 40) + "bar7baz\n")
	b.WriteString("hello LIT and lit LIT LIT\n")
	b.WriteString("xqqABC1 xABc XABC9 ab\xffc é éab\uFFFDcxé ab\xffc\xe9é\n")
	b.WriteString("abcabcabc abcabc abc dabcd qqzz123 zzz12 fooz1bar foo12bar\n")
	b.WriteString("ababcdef abcde ΑΛαβασ1 φφασ٣ ασ\n")
	b.WriteString("bLaLcL1zz8 cdabababZ\nbLaLcL1zz8\ncdabababZ\n")
	b.WriteString(strings.Repeat("zz1 ", 200) + "ab" + strings.Repeat("zz", 100) + "123\n")
	return []byte(b.String())
}

// TestReverseInner holds the reverse inner literal strategy to regexp on
// lines of every length (check, through checkRevInner), and on lines past
// revMinLine, where it is used by default, holds Start to what it was
// without the strategy.
func TestReverseInner(t *testing.T) {
	text := revText()
	long := bytes.Repeat(bytes.ReplaceAll(text, []byte("\n"), []byte(" ")), revMinLine/len(text)+1)
	long = append(append(long, text...), long...) // long lines with short ones between
	for _, c := range revPatterns {
		for _, ic := range []bool{false, true} {
			m, err := Compile(c.pattern, ic)
			if err != nil {
				t.Fatal(err)
			}
			if !ic && (m.rev != nil) != c.applies {
				t.Errorf("%s: strategy applies %v, want %v", c.pattern, m.rev != nil, c.applies)
			}
			if c.pattern == `"id":[0-9]+,"last":true` && !m.preRev {
				t.Errorf("%s: the prefilter's finds are not taken as the literal's", c.pattern)
			}
			check(t, c.pattern, ic, text)
			check(t, c.pattern, ic, long)
			if m.rev == nil {
				continue
			}
			m.rev.spacing = 0 // dense literals too
			old, _ := Compile(c.pattern, ic)
			old.rev = nil
			for _, l := range bytes.Split(long, []byte("\n")) {
				if got, want := m.Start(l), old.Start(l); got != want {
					t.Errorf("%s (ignore case %v): Start on a line of %d bytes = %d, without the strategy %d", c.pattern, ic, len(l), got, want)
				}
			}
			// Start right after the Next that returned the line (which
			// remembers where the literal's occurrence was).
			for pos, hits := 0, 0; pos < len(long); hits++ {
				s, e, ok := m.Next(long[pos:])
				if !ok {
					break
				}
				l := long[pos+s : pos+e]
				if got, want := m.Start(l), old.Start(l); got != want {
					t.Errorf("%s (ignore case %v): Start after Next on hit %d (a line of %d bytes) = %d, without the strategy %d", c.pattern, ic, hits, len(l), got, want)
				}
				pos += e + 1
			}
		}
	}
}

// TestReverseInnerBounded: where a backward scan would read bytes an
// earlier one read (many occurrences in a long run of what the pattern's
// part before its literal repeats), the strategy gives up for the DFA of
// the whole pattern instead, and likewise past the forward scans' budget,
// and where its literal occurs every few bytes.
func TestReverseInnerBounded(t *testing.T) {
	for _, c := range []struct {
		pattern, line string
		want          int  // without the test of density
		dense         bool // the literal comes every few bytes
	}{
		{`x[a-z ]*abc`, strings.Repeat("abc ", 300), dfaFailed, true},
		{`x[a-z ]*abc`, strings.Repeat("abc;", 300), dfaNoMatch, true},
		{`x[a-z ]*abc`, "x" + strings.Repeat("abc ", 300), dfaMatch, false},
		{`abc[a-z ]*x`, strings.Repeat("abc ", 300), dfaFailed, true},
		{`abc[a-z ]*x`, strings.Repeat("abc;", 300), dfaNoMatch, true},
		{`abc[a-z ]*x`, strings.Repeat("abc;"+strings.Repeat(" ", 200), 300), dfaNoMatch, false},
		{`"id":[0-9]+,"last":true`, strings.Repeat(`{"id":1,"last":false},`, 300) + `{"id":2,"last":true}`, dfaMatch, false},
	} {
		m, err := Compile(c.pattern, false)
		if err != nil || m.rev == nil {
			t.Fatalf("%s: %v, strategy %v", c.pattern, err, m.rev != nil)
		}
		m.rev.spacing = 0
		if _, res := m.rev.decide([]byte(c.line), 0); res != c.want {
			t.Errorf("%s on %.20q...: decide = %d, want %d", c.pattern, c.line, res, c.want)
		}
		m.rev.spacing = revSpacing
		if _, res := m.rev.decide([]byte(c.line), 0); res != dfaFailed && c.dense {
			t.Errorf("%s on %.20q...: decide = %d, want %d (the literal's occurrences are dense)", c.pattern, c.line, res, dfaFailed)
		}
		check(t, c.pattern, false, []byte(c.line))
	}
}
