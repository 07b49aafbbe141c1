package tools

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// lineMatcher finds the next match in a block of whole lines.
type lineMatcher struct {
	re *regexp.Regexp
	// literal is set when the pattern is a plain literal: bytes.Index is
	// all the search there is.
	literal *finder
	// required is a literal every match contains. Go's regexp has no DFA,
	// and without a literal prefix it runs its NFA over every byte (over
	// 20x slower than bytes.Index); with required set, the regexp only
	// runs on the few lines that contain the literal.
	required *finder
}

// minRequired is the shortest required literal worth a prefilter: shorter
// ones occur on too many lines to save work.
const minRequired = 3

// compileLineRegexp compiles pattern so that running it over a block of
// many lines finds exactly what running it on each line would: no match may
// span a newline, and ^ and $ anchor at line boundaries. The parsed pattern
// is rewritten (classes and "." lose "\n", literal newlines cannot match,
// text anchors become line anchors) and compiled again from its string form.
func compileLineRegexp(pattern string, ignoreCase bool) (*lineMatcher, error) {
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, errorf("invalid pattern: %v", err)
	}
	tree = withoutNewlines(tree)
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, errorf("invalid pattern: %v", err)
	}
	m := &lineMatcher{re: re}
	if prefix, complete := re.LiteralPrefix(); complete && usableLiteral(prefix) {
		m.literal = newFinder([]byte(prefix))
	} else if lit := requiredLiteral(tree); len(lit) >= minRequired && usableLiteral(lit) {
		m.required = newFinder([]byte(lit))
	}
	return m, nil
}

// usableLiteral reports whether searching for s with bytes.Index finds
// what the regexp finds: not for "", and not when s holds U+FFFD, which the
// regexp also matches against any invalid UTF-8 byte.
func usableLiteral(s string) bool {
	return s != "" && !strings.ContainsRune(s, utf8.RuneError)
}

// requiredLiteral returns the longest case-sensitive literal that every
// match of re must contain, or "" if it finds none. It looks through
// concatenations, groups and repetitions of at least one, and gives up on
// anything else (alternations, optional parts), which is always safe.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return string(re.Rune)
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if lit := requiredLiteral(sub); len(lit) > len(best) {
				best = lit
			}
		}
		return best
	}
	return ""
}

// withoutNewlines rewrites a parsed regexp so that it cannot match "\n"
// (see compileLineRegexp).
func withoutNewlines(re *syntax.Regexp) *syntax.Regexp {
	for i, sub := range re.Sub {
		re.Sub[i] = withoutNewlines(sub)
	}
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return &syntax.Regexp{Op: syntax.OpNoMatch}
			}
		}
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			return &syntax.Regexp{Op: syntax.OpNoMatch}
		}
		re.Rune = out
	}
	return re
}

// find returns the offset of the first match in b, and whether there is
// one. Only the start matters: the whole line is printed.
func (m *lineMatcher) find(b []byte) (int, bool) {
	if m.literal != nil {
		i := m.literal.index(b)
		return i, i >= 0
	}
	if m.required != nil {
		// Run the regexp only on lines holding the required literal.
		for from := 0; from < len(b); {
			i := m.required.index(b[from:])
			if i < 0 {
				return 0, false
			}
			i += from
			start, end := lineAround(b, i)
			if loc := m.re.FindIndex(b[start:end]); loc != nil {
				return start + loc[0], true
			}
			from = end + 1
		}
		return 0, false
	}
	loc := m.re.FindIndex(b)
	if loc == nil {
		return 0, false
	}
	return loc[0], true
}
