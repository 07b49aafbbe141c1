package tools

import (
	"bytes"
	"cmp"
	"regexp/syntax"
	"slices"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/match"
)

// Go's regexp reads each invalid UTF-8 byte as U+FFFD, so "." and [^x]
// match a byte of a Latin-1 file, and a literal U+FFFD matches any invalid
// byte. ripgrep matches no invalid byte with anything, and moat answers as
// ripgrep does: a line that is valid UTF-8 is decided by the pattern as
// written; a line holding invalid bytes is decided by a strict form of the
// pattern (strictMatcher) run on the line with each real U+FFFD replaced by
// a stand-in the line does not hold. The strict form matches the stand-in wherever
// the pattern matches U+FFFD, and U+FFFD (now only ever an invalid byte)
// nowhere.

// standIns are the runes that may stand in for a real U+FFFD in a line
// with invalid bytes: noncharacters, which no text has business holding.
// A line takes the first one it does not hold, so that a real one (a
// U+10FFFE in the text) is never taken for a U+FFFD; a line holding all
// of them is decided by the pattern as written.
const standIns = "\U0010FFFE\U0010FFFF\uFFFE\uFFFF\uFDD0\uFDD1\uFDD2\uFDD3\uFDD4\uFDD5\uFDD6\uFDD7"

// strictMatcher decides lines holding invalid bytes with the strict form
// of the pattern for each stand-in a line needs (see strictFFFD), compiled
// by package match the first time a line needs it.
type strictMatcher struct {
	tree *syntax.Regexp // the pattern as parsed; never changed
	m    map[rune]*match.Matcher
	stop func() bool
}

// newStrict returns the strict matcher of the pattern, or nil when the
// pattern cannot match U+FFFD at all (then it is strict already).
func newStrict(pattern string, ignoreCase bool) (*strictMatcher, error) {
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, errorf("invalid pattern: %v", err)
	}
	if !strictFFFD(cloneTree(tree), standInAt(0)) {
		return nil, nil
	}
	return &strictMatcher{tree: tree, m: map[rune]*match.Matcher{}}, nil
}

// standInAt is the i-th stand-in.
func standInAt(i int) rune {
	for _, r := range standIns {
		if i == 0 {
			return r
		}
		i--
	}
	return -1
}

// matches reports whether a line holding invalid bytes matches as
// ripgrep would have it; ok is false when no stand-in is free in it (the
// caller keeps the pattern's own answer).
func (s *strictMatcher) matches(line []byte) (hit, ok bool) {
	in := rune(-1)
	for _, r := range standIns {
		if !bytes.ContainsRune(line, r) {
			in = r
			break
		}
	}
	if in < 0 {
		return false, false
	}
	m := s.m[in]
	if m == nil {
		t := cloneTree(s.tree)
		strictFFFD(t, in)
		var err error
		if m, err = match.Compile(t.String(), false); err != nil {
			return false, false // cannot happen: the pattern compiled once already
		}
		m.SetStop(s.stop)
		s.m[in] = m
	}
	const fffd = "\uFFFD"
	if bytes.Contains(line, []byte(fffd)) {
		line = bytes.ReplaceAll(line, []byte(fffd), utf8.AppendRune(nil, in))
	}
	_, _, found := m.Next(line)
	return found, true
}

// cloneTree returns a deep copy of re, for strictFFFD to rewrite.
func cloneTree(re *syntax.Regexp) *syntax.Regexp {
	c := *re
	c.Rune = append([]rune(nil), re.Rune...)
	c.Sub = nil
	for _, sub := range re.Sub {
		c.Sub = append(c.Sub, cloneTree(sub))
	}
	return &c
}

// strictFFFD rewrites re in place so that what matched U+FFFD matches the
// stand-in in instead (which the line does not hold), and reports whether
// anything could match either.
func strictFFFD(re *syntax.Regexp, in rune) bool {
	changed := false
	for _, sub := range re.Sub {
		changed = strictFFFD(sub, in) || changed
	}
	const bad = utf8.RuneError
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		re.Rune = []rune{0, bad - 1, bad + 1, utf8.MaxRune}
		if re.Op == syntax.OpAnyCharNotNL {
			re.Rune = []rune{0, '\n' - 1, '\n' + 1, bad - 1, bad + 1, utf8.MaxRune}
		}
		re.Op = syntax.OpCharClass
		return true
	case syntax.OpLiteral:
		for i, r := range re.Rune {
			if r == bad {
				re.Rune[i] = in
				changed = true
			} else if r == in {
				*re = syntax.Regexp{Op: syntax.OpNoMatch}
				return true
			}
		}
	case syntax.OpCharClass:
		hasBad, hasIn := false, false
		for i := 0; i+1 < len(re.Rune); i += 2 {
			hasBad = hasBad || re.Rune[i] <= bad && bad <= re.Rune[i+1]
			hasIn = hasIn || re.Rune[i] <= in && in <= re.Rune[i+1]
		}
		if !hasBad && !hasIn {
			return changed
		}
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			out = appendWithout(out, re.Rune[i], re.Rune[i+1], bad, in)
		}
		if hasBad {
			out = append(out, in, in)
		}
		if len(out) == 0 {
			*re = syntax.Regexp{Op: syntax.OpNoMatch}
		} else {
			re.Rune = mergeRanges(out)
		}
		return true
	}
	return changed
}

// mergeRanges sorts a class's ranges and joins those that overlap or
// touch, as syntax keeps a class: the stand-in added after the cut ranges
// can touch one of them (U+10FFFF after ...-U+10FFFE), and a class whose
// ranges touch is printed wrongly when negated (`\x{10ffff}-\x{10fffe}`),
// which then does not compile.
func mergeRanges(r []rune) []rune {
	type span struct{ lo, hi rune }
	spans := make([]span, 0, len(r)/2)
	for i := 0; i+1 < len(r); i += 2 {
		spans = append(spans, span{r[i], r[i+1]})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	out := r[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.lo <= out[n-1]+1 {
			out[n-1] = max(out[n-1], s.hi)
			continue
		}
		out = append(out, s.lo, s.hi)
	}
	return out
}

// appendWithout appends the range lo-hi to ranges, less the runes x and y.
func appendWithout(ranges []rune, lo, hi, x, y rune) []rune {
	for _, cut := range []rune{min(x, y), max(x, y)} {
		if lo <= cut && cut <= hi {
			if lo < cut {
				ranges = append(ranges, lo, cut-1)
			}
			lo = cut + 1
		}
	}
	if lo <= hi {
		ranges = append(ranges, lo, hi)
	}
	return ranges
}
