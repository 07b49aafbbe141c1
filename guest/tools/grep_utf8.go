package tools

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// strictRegexp returns the pattern rewritten so that nothing in it matches
// U+FFFD, or nil when nothing in it could: no ".", no class holding U+FFFD
// (negated classes all do), no literal U+FFFD.
//
// Why: Go's regexp reads each invalid UTF-8 byte as U+FFFD, so "." and
// [^x] match a byte of a Latin-1 file; ripgrep matches no invalid byte with
// anything, and moat answers as ripgrep does. A line that is valid UTF-8 is
// decided by the pattern as written. A line holding invalid bytes is
// decided by the strict form, which can only misjudge a line holding both
// an invalid byte and a real U+FFFD that the match needs: rare next to
// Latin-1 text, and erring towards no hit.
func strictRegexp(pattern string, ignoreCase bool) (*regexp.Regexp, error) {
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, errorf("invalid pattern: %v", err)
	}
	if !withoutFFFD(tree) {
		return nil, nil
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, errorf("invalid pattern: %v", err)
	}
	return re, nil
}

// withoutFFFD rewrites re in place so that it cannot match U+FFFD, and
// reports whether anything changed.
func withoutFFFD(re *syntax.Regexp) bool {
	changed := false
	for _, sub := range re.Sub {
		changed = withoutFFFD(sub) || changed
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
		for _, r := range re.Rune {
			if r == bad {
				*re = syntax.Regexp{Op: syntax.OpNoMatch}
				return true
			}
		}
	case syntax.OpCharClass:
		var out []rune
		hit := false
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= bad && bad <= hi {
				hit = true
				if lo < bad {
					out = append(out, lo, bad-1)
				}
				if hi > bad {
					out = append(out, bad+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if !hit {
			return changed
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
