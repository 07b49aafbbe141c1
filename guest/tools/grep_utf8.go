package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Go's regexp reads each invalid UTF-8 byte as U+FFFD, so "." and [^x]
// match a byte of a Latin-1 file, and a literal U+FFFD matches any invalid
// byte. ripgrep matches no invalid byte with anything, and moat answers as
// ripgrep does: a line that is valid UTF-8 is decided by the pattern as
// written; a line holding invalid bytes is decided by a strict form of the
// pattern (strictRegexp) run on the line with each real U+FFFD replaced by
// a stand-in (strictLine). The strict form matches the stand-in wherever
// the pattern matches U+FFFD, and U+FFFD (now only ever an invalid byte)
// nowhere.

// fffdStandIn stands in for a real U+FFFD in a line with invalid bytes: a
// noncharacter, which no text has any business holding.
const fffdStandIn = '\U0010FFFE'

// strictRegexp returns the strict form of the pattern, or nil when the
// pattern cannot match U+FFFD or the stand-in at all (then it is strict
// already).
func strictRegexp(pattern string, ignoreCase bool) (*regexp.Regexp, error) {
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, errorf("invalid pattern: %v", err)
	}
	if !strictFFFD(tree) {
		return nil, nil
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, errorf("invalid pattern: %v", err)
	}
	return re, nil
}

// strictLine returns line with each real U+FFFD replaced by the stand-in
// (a copy, only when there is one).
func strictLine(line []byte) []byte {
	const fffd = "\uFFFD"
	if !bytes.Contains(line, []byte(fffd)) {
		return line
	}
	return bytes.ReplaceAll(line, []byte(fffd), utf8.AppendRune(nil, fffdStandIn))
}

// strictFFFD rewrites re in place so that what matched U+FFFD matches the
// stand-in instead, and reports whether anything could match either.
func strictFFFD(re *syntax.Regexp) bool {
	changed := false
	for _, sub := range re.Sub {
		changed = strictFFFD(sub) || changed
	}
	const bad, in = utf8.RuneError, fffdStandIn
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
			re.Rune = out
		}
		return true
	}
	return changed
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
