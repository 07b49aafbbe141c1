package match

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// A prefilter finds the places where a match may be: every match of the
// pattern holds one of its literals. It is exact about the literals and
// says nothing about the rest of the pattern; the DFA and regexp decide.
//
// Each literal is found by scanning (indexByte) for its rarest byte,
// both cases of it for a case-folded literal, and comparing the whole
// literal around each occurrence. A case-folded literal keeps only runes
// whose case variants are all ASCII: 'k' also matches the Kelvin sign
// U+212A and 's' the long s U+017F under (?i), so they (and non-ASCII
// runes) end a literal rather than be compared bytewise.
type prefilter struct {
	one *finder // the only literal, when it is not case-folded
	// ac finds a large set (more than maxLits literals) instead.
	ac *acMatcher
	// seq finds a run of byte classes instead (withSeq); with one, the
	// runs that hold one's literal at offset seqAt.
	seq   *classSeq
	seqAt int
	// fold finds a case-folded literal, all its forms in one pass.
	fold *foldLit
	// exact says every occurrence of a literal is a match: the pattern is
	// the set of literals, nothing more.
	exact bool
	lits  []plit
	// scan is the bytes to look for: each literal's rarest byte, both
	// cases of it for a folded literal.
	scan []byte
	// Boyer-Moore-Horspool over the set, for when the scan bytes turn out
	// to be common in the text: the window is the shortest literal's
	// length; skip[c] is how far the window may move when its last byte is
	// c, and last[c] says c can end a match's window.
	window int
	maxLen int
	skip   [256]uint8
	last   [256]bool
}

// A plit is one literal of a prefilter.
type plit struct {
	b    []byte // lower-cased when fold
	fold bool
	off  int // offset of the rarest byte
}

// A lit is a literal every match holds (one of a set of them).
type lit struct {
	b    []byte
	fold bool
}

// Bounds on a prefilter: literals in a set scanned for by their rare
// bytes (a larger set goes to Aho-Corasick, up to maxExpand literals of
// maxExpandBytes in all), distinct bytes to scan for, and how common (by
// byteRank) a one-byte literal may be and still help.
const (
	maxLits        = 8
	maxExpand      = 1 << 16
	maxExpandBytes = 1 << 20
	maxScanBytes   = 4
	maxOneByteRank = 200
)

// newPrefilter returns the prefilter of the (line-rewritten) pattern, or
// nil when it has no literal worth scanning for.
func newPrefilter(re *syntax.Regexp) *prefilter {
	if re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase != 0 && isASCII([]byte(string(re.Rune))) {
		// The pattern is a folded ASCII literal: every occurrence is a
		// match. (A literal beyond ASCII has rare bytes to scan for.)
		if f := newFoldLit(re.Rune); f != nil {
			return &prefilter{fold: f, exact: true}
		}
	}
	set, ok := requiredSet(re)
	if !ok {
		return nil
	}
	p := &prefilter{}
	if len(set) > maxLits {
		return newACPrefilter(set, re)
	}
	all, whole, ok := expand(re)
	exact := ok && whole && sameLits(all, set)
	if ok && whole && !exact && foldedK(all) {
		// The pattern is a set of strings that the scan below would find
		// only in part (a folded k or s, whose other forms are not ASCII):
		// with those forms listed (foldVariants) the set is found whole,
		// and its finds are the matches. The scan compares bytes beyond
		// ASCII as they are, so it takes them; a larger set goes to
		// Aho-Corasick.
		if len(all) > maxLits {
			if ac := newACPrefilter(all, re); ac != nil && ac.exact {
				return ac
			}
		} else {
			set, exact = all, true
		}
	}
	if len(set) == 1 && !set[0].fold && (len(set[0].b) > 1 || int(byteRank[set[0].b[0]]) <= maxOneByteRank) {
		p.one = newFinder(set[0].b)
		p.exact = exact
		return p
	}
	for _, l := range set {
		pl := plit{b: l.b, fold: l.fold}
		if l.fold {
			pl.b = bytes.Clone(l.b)
			for i, c := range pl.b {
				pl.b[i] = lower(c)
			}
		}
		for i := range pl.b {
			if foldRank(pl.b[i], l.fold) < foldRank(pl.b[pl.off], l.fold) {
				pl.off = i
			}
		}
		if len(pl.b) == 1 && foldRank(pl.b[0], l.fold) > maxOneByteRank {
			return nil
		}
		c := pl.b[pl.off]
		p.addScan(c)
		if l.fold && upper(c) != c {
			p.addScan(upper(c))
		}
		p.lits = append(p.lits, pl)
	}
	if len(p.scan) > maxScanBytes {
		return nil
	}
	p.initSkip()
	p.exact = exact
	return p
}

// initSkip builds the Horspool tables over each literal's first window
// bytes, both cases of a folded literal's letters.
func (p *prefilter) initSkip() {
	p.window = 1 << 30
	for _, l := range p.lits {
		p.window = min(p.window, len(l.b))
		p.maxLen = max(p.maxLen, len(l.b))
	}
	if p.window > 255 {
		p.window = 255
	}
	m := p.window
	for i := range p.skip {
		p.skip[i] = uint8(m)
	}
	for _, l := range p.lits {
		for i := 0; i < m; i++ {
			for _, c := range [2]byte{l.b[i], upper(l.b[i])} {
				if !l.fold && c != l.b[i] {
					continue
				}
				if i == m-1 {
					p.last[c] = true
				} else {
					p.skip[c] = min(p.skip[c], uint8(m-1-i))
				}
			}
		}
	}
}

// horspool returns the offset in b of the first occurrence of one of the
// literals, or -1.
func (p *prefilter) horspool(b []byte) int {
	m := p.window
	for i := m - 1; i < len(b); {
		c := b[i]
		if p.last[c] {
			if j := p.verify(b, i-m+1); j >= 0 {
				return j
			}
		}
		i += int(p.skip[c])
	}
	return -1
}

// verify returns start if one of the literals occurs there, else -1.
func (p *prefilter) verify(b []byte, start int) int {
	for i := range p.lits {
		l := &p.lits[i]
		if start+len(l.b) > len(b) {
			continue
		}
		if l.fold {
			if equalFold(b[start:start+len(l.b)], l.b) {
				return start
			}
		} else if bytes.Equal(b[start:start+len(l.b)], l.b) {
			return start
		}
	}
	return -1
}

func (p *prefilter) addScan(c byte) {
	if bytes.IndexByte(p.scan, c) < 0 {
		p.scan = append(p.scan, c)
	}
}

// foldRank is how common c is (byteRank), counting both cases when fold.
func foldRank(c byte, fold bool) int {
	r := int(byteRank[c])
	if fold {
		r = max(r, int(byteRank[upper(c)]), int(byteRank[lower(c)]))
	}
	return r
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// index returns the offset in b of the first occurrence of one of the
// literals, or -1.
func (p *prefilter) index(b []byte) int {
	if p.one != nil {
		if p.seq != nil {
			return p.runAround(b)
		}
		return p.one.index(b)
	}
	if p.ac != nil {
		return p.ac.index(b)
	}
	if p.seq != nil {
		return p.seq.index(b)
	}
	if p.fold != nil {
		return p.fold.index(b)
	}
	var pos [maxScanBytes]int
	misses := 0
	for k, c := range p.scan {
		pos[k] = indexFrom(b, 0, c)
	}
	for {
		// The scan byte that occurs first.
		k, at := -1, len(b)
		for j := range p.scan {
			if pos[j] >= 0 && pos[j] < at {
				k, at = j, pos[j]
			}
		}
		if k < 0 {
			return -1
		}
		c := b[at]
		for i := range p.lits {
			l := &p.lits[i]
			start := at - l.off
			if start < 0 || start+len(l.b) > len(b) {
				continue
			}
			if l.fold {
				if lower(c) == l.b[l.off] && equalFold(b[start:start+len(l.b)], l.b) {
					return start
				}
			} else if c == l.b[l.off] && bytes.Equal(b[start:start+len(l.b)], l.b) {
				return start
			}
		}
		pos[k] = indexFrom(b, at+1, p.scan[k])
		// Scan bytes that are common in this text: switch to Horspool,
		// which skips up to a window per step whatever the text.
		if misses++; p.window >= minSkipLen && misses >= rareMinFalse && misses*rareSpan > at {
			// Every occurrence not yet found has its scan byte after at.
			base := max(0, at+1-(p.maxLen-1))
			if j := p.horspool(b[base:]); j >= 0 {
				return base + j
			}
			return -1
		}
	}
}

func indexFrom(b []byte, from int, c byte) int {
	i := indexByte(b[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

// equalFold reports whether s equals the lower-case ASCII lit, ignoring
// the case of ASCII letters.
func equalFold(s, lit []byte) bool {
	for i, c := range s {
		if lower(c) != lit[i] {
			return false
		}
	}
	return true
}

// requiredSet returns literals one of which every match of re holds, or
// ok false when it finds none. It looks through groups, repetitions of at
// least one, concatenations (keeping the best set of their parts) and
// alternations (the union of their branches' sets); anything else has no
// literal, which is always safe.
func requiredSet(re *syntax.Regexp) ([]lit, bool) {
	if set, _, ok := expand(re); ok && len(set) > maxLits {
		// A finite set of strings, too many to scan for one by one: its
		// literals themselves (an alternation's prefixes factored out by
		// the parser would otherwise leave only the short prefixes).
		return set, true
	}
	switch re.Op {
	case syntax.OpLiteral:
		l := searchable(re.Rune, re.Flags&syntax.FoldCase != 0)
		return []lit{l}, len(l.b) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredSet(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []lit
		for _, sub := range re.Sub {
			if set, ok := requiredSet(sub); ok && (best == nil || setCost(set) < setCost(best)) {
				best = set
			}
		}
		return best, best != nil
	case syntax.OpAlternate:
		var all []lit
		for _, sub := range re.Sub {
			set, ok := requiredSet(sub)
			if !ok || len(all)+len(set) > maxExpand {
				return nil, false
			}
			all = append(all, set...)
		}
		return all, true
	}
	return nil, false
}

// setCost estimates how often a set's literals turn up in text: each
// literal by its rarest byte's rank (taken as a doubling of frequency every
// 16 ranks), each further byte making a false hit rarer.
func setCost(set []lit) int {
	cost := 0
	for _, l := range set {
		best := 255
		for _, c := range l.b {
			if l.fold {
				c = lower(c)
			}
			best = min(best, foldRank(c, l.fold))
		}
		cost += (1 << 20 >> (15 - best/16)) >> (2 * min(len(l.b)-1, 8))
	}
	return cost
}

// searchable returns the longest part of a literal that bytewise search
// finds exactly: without U+FFFD (which also matches invalid bytes), and
// when folded, of ASCII runes whose case variants are all ASCII.
func searchable(runes []rune, fold bool) lit {
	a, b := searchableRun(runes, fold)
	return lit{b: []byte(string(runes[a:b])), fold: fold}
}

// searchableRun returns the bounds [a,b) in runes of searchable's part:
// the first of the longest runs that bytewise search finds exactly.
func searchableRun(runes []rune, fold bool) (a, b int) {
	start := 0
	for i, r := range runes {
		ok := r != utf8.RuneError && r != '\n'
		if fold {
			ok = ok && r < utf8.RuneSelf && asciiOrbit(r)
		}
		if !ok {
			start = i + 1
		} else if i+1-start > b-a {
			a, b = start, i+1
		}
	}
	return a, b
}

// same reports whether p and q look for the same one literal.
func (p *prefilter) same(q *prefilter) bool {
	switch {
	case p.one != nil && q.one != nil:
		return bytes.Equal(p.one.pat, q.one.pat)
	case p.one == nil && q.one == nil && p.ac == nil && q.ac == nil && p.seq == nil && q.seq == nil &&
		p.fold == nil && q.fold == nil && len(p.lits) == 1 && len(q.lits) == 1:
		return p.lits[0].fold == q.lits[0].fold && bytes.Equal(p.lits[0].b, q.lits[0].b)
	}
	return false
}

// foldFinder returns a prefilter that finds one ASCII literal ignoring
// ASCII case (b is lower-cased in place).
func foldFinder(b []byte) *prefilter {
	l := plit{b: b, fold: true}
	for i, c := range l.b {
		l.b[i] = lower(c)
		if foldRank(l.b[i], true) < foldRank(l.b[l.off], true) {
			l.off = i
		}
	}
	p := &prefilter{lits: []plit{l}}
	p.addScan(l.b[l.off])
	p.addScan(upper(l.b[l.off]))
	p.initSkip()
	return p
}

// asciiOrbit reports whether every case variant of r is ASCII.
func asciiOrbit(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// newACPrefilter is the prefilter of a large set: Aho-Corasick over its
// literals, folded if any is. It is exact when re is that set and nothing
// more, with every literal whole and of one folding (see expand).
func newACPrefilter(set []lit, re *syntax.Regexp) *prefilter {
	fold := false
	for _, l := range set {
		fold = fold || l.fold
		if len(l.b) == 1 && foldRank(l.b[0], l.fold) > maxOneByteRank {
			return nil // a common byte: the DFA's scan does better
		}
	}
	lits := make([][]byte, len(set))
	for i, l := range set {
		lits[i] = l.b
		if fold {
			lits[i] = bytes.Clone(l.b)
			for j, c := range lits[i] {
				lits[i][j] = lower(c) // ASCII only: the Kelvin sign stays itself
			}
		}
	}
	ac := newAC(lits, fold)
	if ac == nil {
		return nil
	}
	all, exact, ok := expand(re)
	for _, l := range all {
		if fold && !l.fold && hasLetter([]rune(string(l.b))) {
			exact = false // a case-sensitive string searched for folded
		}
	}
	return &prefilter{ac: ac, exact: ok && exact && len(all) == len(set)}
}

// expand returns the strings re matches when they are few (maxExpand, of
// maxExpandBytes in all), as the literals to search for: ok is false when
// re is not such a set. exact says that finding any of the literals
// bytewise (folded ones ignoring ASCII case) is finding a match of re:
// false when a literal had to be cut to a searchable part, or one string
// mixes folded and unfolded parts.
func expand(re *syntax.Regexp) (set []lit, exact, ok bool) {
	strs, ok := expandRunes(re)
	if !ok || len(strs) == 0 {
		return nil, false, false
	}
	exact = true
	for _, s := range strs {
		if len(s.r) == 0 {
			return nil, false, false // the empty string: no literal at all
		}
		l := searchable(s.r, s.fold)
		if s.fold && foldSearchable(s) {
			l = lit{b: []byte(string(s.r)), fold: true}
		}
		if len(l.b) == 0 {
			return nil, false, false
		}
		if len(l.b) != len(string(s.r)) || s.mixed {
			exact = false
		}
		set = append(set, l)
	}
	return set, exact, true
}

// A runeStr is one string of an expansion.
type runeStr struct {
	r           []rune
	fold, mixed bool // folded (in part: mixed)
	// variants: every folded 'k' and 's' in r has its other forms listed
	// as strings of their own (foldVariants).
	variants bool
}

// expandRunes lists the strings re matches, or ok false when they are not
// few or re is more than literals, small classes, concatenations,
// alternations, optional parts and groups.
func expandRunes(re *syntax.Regexp) ([]runeStr, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return foldVariants(re.Rune)
		}
		return []runeStr{{r: re.Rune}}, true
	case syntax.OpEmptyMatch:
		return []runeStr{{variants: true}}, true
	case syntax.OpNoMatch:
		return nil, true
	case syntax.OpCharClass:
		// An ASCII letter in both cases is one folded string (as the
		// parser writes (?i)x inside a factored alternation), so that it
		// joins folded literals without loss.
		var out []runeStr
		in := func(r rune) bool {
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i] <= r && r <= re.Rune[i+1] {
					return true
				}
			}
			return false
		}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if len(out)+int(re.Rune[i+1]-re.Rune[i]) >= 2*maxLits {
				return nil, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				lo, up := rune(lower(byte(r))), rune(upper(byte(r)))
				switch {
				case r >= utf8.RuneSelf || lo == up || !in(lo) || !in(up):
					out = append(out, runeStr{r: []rune{r}, variants: true})
				case r == lo:
					v := true
					switch r {
					case 'k':
						v = in('\u212A')
					case 's':
						v = in('\u017F')
					}
					out = append(out, runeStr{r: []rune{r}, fold: true, variants: v})
				}
			}
		}
		return out, true
	case syntax.OpCapture:
		return expandRunes(re.Sub[0])
	case syntax.OpQuest:
		sub, ok := expandRunes(re.Sub[0])
		return append(sub, runeStr{variants: true}), ok && len(sub) < maxExpand
	case syntax.OpAlternate:
		var out []runeStr
		for _, sub := range re.Sub {
			s, ok := expandRunes(sub)
			if !ok || len(out)+len(s) > maxExpand {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	case syntax.OpConcat:
		out := []runeStr{{variants: true}}
		size := 0
		for _, sub := range re.Sub {
			s, ok := expandRunes(sub)
			if !ok || len(out)*len(s) > maxExpand {
				return nil, false
			}
			next := make([]runeStr, 0, len(out)*len(s))
			size = 0
			for _, a := range out {
				for _, b := range s {
					r := append(append(make([]rune, 0, len(a.r)+len(b.r)), a.r...), b.r...)
					size += len(r)
					mixed := a.mixed || b.mixed || a.fold && !b.fold && hasLetter(b.r) || b.fold && !a.fold && hasLetter(a.r)
					variants := (a.variants || !a.fold) && (b.variants || !b.fold)
					next = append(next, runeStr{r: r, fold: a.fold || b.fold, mixed: mixed, variants: variants})
				}
			}
			if size > maxExpandBytes {
				return nil, false
			}
			out = next
		}
		return out, true
	}
	return nil, false
}

// foldVariants expands a case-folded literal for a folding search: ASCII
// letters are found in either case by the search itself, but 'k' and 's'
// also match the Kelvin sign and the long s, so each of those gives a
// second string with that rune in its place (at most maxExpand strings;
// past that, the literal stands as it is and is cut to what a folding
// search finds, see expand).
func foldVariants(runes []rune) ([]runeStr, bool) {
	out := []runeStr{{fold: true, variants: true}}
	for _, r := range runes {
		forms := foldForms(r)
		if len(forms) == 1 || len(forms)*len(out) > maxExpand {
			for i := range out {
				out[i].r = append(out[i].r, r)
				out[i].variants = out[i].variants && len(forms) == 1
			}
			continue
		}
		n := len(out)
		for i := 0; i < n; i++ {
			for _, f := range forms[1:] {
				out = append(out, runeStr{r: append(slices.Clone(out[i].r), f), fold: true, variants: out[i].variants})
			}
			out[i].r = append(out[i].r, r)
		}
	}
	return out, true
}

// foldForms is r, then the other forms of its folding orbit that a
// folding bytewise search (which ignores the case of ASCII letters only)
// must be given to find what regexp's (?i) finds: every form beyond
// ASCII (the Kelvin sign for k, the long s for s, ẞ for ß), and for r
// beyond ASCII one ASCII form, if it has one (k for the Kelvin sign).
func foldForms(r rune) []rune {
	forms := []rune{r}
	ascii := r < utf8.RuneSelf
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		switch {
		case f >= utf8.RuneSelf:
			forms = append(forms, f)
		case !ascii:
			ascii = true
			forms = append(forms, f)
		}
	}
	return forms
}

// foldSearchable reports whether a folding bytewise search for s finds
// exactly what regexp's (?i) does: foldVariants listed the forms of every
// rune (foldForms), and none is a newline or U+FFFD (which regexp also
// reads where the text has an invalid byte).
func foldSearchable(s runeStr) bool {
	if !s.variants {
		return false
	}
	for _, r := range s.r {
		if r == '\n' || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// hasLetter reports whether runes hold an ASCII letter, whose case a
// folding search would ignore.
func hasLetter(runes []rune) bool {
	for _, r := range runes {
		if r < utf8.RuneSelf && lower(byte(r)) != upper(byte(r)) {
			return true
		}
	}
	return false
}

// foldedK reports whether a set holds a folded literal with a k or an s,
// or a rune beyond ASCII (ß), which the scan cuts (their other forms are
// not ASCII) and a search given those forms (foldVariants) finds whole.
func foldedK(set []lit) bool {
	for _, l := range set {
		if l.fold && (bytes.ContainsAny(l.b, "kKsS") || !isASCII(l.b)) {
			return true
		}
	}
	return false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// sameLits reports whether two literal sets are the same, in order.
func sameLits(a, b []lit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].fold != b[i].fold || !bytes.Equal(a[i].b, b[i].b) {
			return false
		}
	}
	return true
}
