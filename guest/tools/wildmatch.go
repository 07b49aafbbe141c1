package tools

import "strings"

// This file is git's wildmatch (wildmatch.c), ported line for line with the
// WM_PATHNAME flag always set and WM_CASEFOLD never (core.ignorecase is off
// on the file systems moat runs on). .gitignore rules are matched with it,
// so that "*", "?", "[...]" (with "!" or "^", ranges, [:class:] and
// backslash escapes), "\x" and the three "**" forms mean exactly what they
// mean to git. Go's path.Match and doublestar differ from it ("[!a]",
// escapes inside brackets, "**" next to other characters), which is why
// neither is used for ignore rules.

// wildmatch results, as in git.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildSteps bounds the work of one match: git's algorithm is polynomial,
// but a hostile rule with several "**" against a deep path can still take
// billions of steps. A match that runs out counts as no match and is
// reported (see ignorer.matchRule).
const wildSteps = 1 << 14

// wildmatcher carries the step budget of one match.
type wildmatcher struct {
	steps, limit int
}

// at is s[i], or 0 past the end (C strings end in NUL).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// isGlobSpecial is git's is_glob_special.
func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// wildmatch reports whether text matches pattern as git's wildmatch with
// WM_PATHNAME does, taking at most limit steps; steps is how many it took,
// more than limit when it ran out (and matched is then false).
func wildmatch(pattern, text string, limit int) (matched bool, steps int) {
	m := wildmatcher{limit: limit}
	r := m.dowild(pattern, 0, text, 0)
	return r == wmMatch && m.steps <= limit, m.steps
}

func (m *wildmatcher) dowild(p string, pi int, t string, ti int) int {
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		if m.steps++; m.steps > m.limit {
			return wmAbortAll
		}
		pch := p[pi]
		if ti >= len(t) && pch != '*' {
			return wmAbortAll
		}
		tch := at(t, ti)
		switch pch {
		case '\\':
			// Literal match with the next character; a trailing
			// backslash matches nothing.
			pi++
			if tch != at(p, pi) {
				return wmNoMatch
			}
		default:
			if tch != pch {
				return wmNoMatch
			}
		case '?':
			if tch == '/' {
				return wmNoMatch
			}
		case '*':
			matchSlash := false
			pi++
			if at(p, pi) == '*' {
				prev := pi - 2
				for pi++; at(p, pi) == '*'; pi++ {
				}
				if (prev < 0 || p[prev] == '/') &&
					(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && at(p, pi+1) == '/')) {
					// "foo/**/bar" also matches "foo/bar".
					if at(p, pi) == '/' && m.dowild(p, pi+1, t, ti) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				}
			}
			if pi == len(p) {
				// A trailing "**" matches everything, a trailing "*"
				// only what has no more slashes.
				if !matchSlash && strings.IndexByte(t[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			} else if !matchSlash && p[pi] == '/' {
				// One star followed by a slash matches up to the next
				// slash; the loop's increment steps over both slashes.
				j := strings.IndexByte(t[ti:], '/')
				if j < 0 {
					return wmNoMatch
				}
				ti += j
				continue
			}
			for {
				if ti >= len(t) {
					break
				}
				if !isGlobSpecial(p[pi]) {
					// A star followed by a literal: skip to where the
					// literal occurs (not past a slash unless "**").
					pch = p[pi]
					for ti < len(t) && (matchSlash || t[ti] != '/') && t[ti] != pch {
						ti++
					}
					if at(t, ti) != pch {
						if matchSlash {
							return wmAbortAll
						}
						return wmAbortToStarStar
					}
				}
				tch = at(t, ti)
				if r := m.dowild(p, pi, t, ti); r != wmNoMatch {
					if !matchSlash || r != wmAbortToStarStar {
						return r
					}
				} else if !matchSlash && tch == '/' {
					return wmAbortToStarStar
				}
				ti++
			}
			return wmAbortAll
		case '[':
			pi++
			pch = at(p, pi)
			if pch == '^' {
				pch = '!'
			}
			negated := pch == '!'
			if negated {
				pi++
				pch = at(p, pi)
			}
			var prev byte
			matched := false
			for {
				if pi >= len(p) {
					return wmAbortAll
				}
				switch {
				case pch == '\\':
					pi++
					if pi >= len(p) {
						return wmAbortAll
					}
					pch = p[pi]
					if tch == pch {
						matched = true
					}
				case pch == '-' && prev != 0 && pi+1 < len(p) && p[pi+1] != ']':
					pi++
					pch = p[pi]
					if pch == '\\' {
						pi++
						if pi >= len(p) {
							return wmAbortAll
						}
						pch = p[pi]
					}
					if tch <= pch && tch >= prev {
						matched = true
					}
					pch = 0 // so that prev becomes 0
				case pch == '[' && at(p, pi+1) == ':':
					pi += 2
					s := pi
					for pi < len(p) && p[pi] != ']' {
						pi++
					}
					if pi >= len(p) {
						return wmAbortAll
					}
					if n := pi - s - 1; n < 0 || p[pi-1] != ':' {
						// No ":]": an ordinary "[" in the set.
						pi = s - 2
						pch = '['
						if tch == pch {
							matched = true
						}
						break
					}
					in, known := charClass(p[s:pi-1], tch)
					if !known {
						return wmAbortAll
					}
					if in {
						matched = true
					}
					pch = 0
				default:
					if tch == pch {
						matched = true
					}
				}
				prev = pch
				pi++
				pch = at(p, pi)
				if pch == ']' {
					break
				}
			}
			if matched == negated || tch == '/' {
				return wmNoMatch
			}
		}
	}
	if ti < len(t) {
		return wmNoMatch
	}
	return wmMatch
}

// charClass tests c against a POSIX class name as git's sane_ctype does
// (ASCII only); known is false for a name git does not know.
func charClass(name string, c byte) (in, known bool) {
	upper := c >= 'A' && c <= 'Z'
	lower := c >= 'a' && c <= 'z'
	digit := c >= '0' && c <= '9'
	alpha := upper || lower
	graph := c > ' ' && c < 0x7f
	switch name {
	case "alnum":
		return alpha || digit, true
	case "alpha":
		return alpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return lower, true
	case "print":
		return graph || c == ' ', true
	case "punct":
		return graph && !alpha && !digit, true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F', true
	}
	return false, false
}
