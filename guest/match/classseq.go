package match

import (
	"math"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// Runs of byte classes: a pattern with no usable literal often still
// says that every match holds a run of bytes of known ASCII classes, one
// class per position: `[A-Z_]{12,}` twelve bytes of [A-Z_],
// `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b` ten bytes, digits and two '-'. A
// classSeq finds the first such run Boyer-Moore-Horspool's way: it looks
// at the last byte of a window and, when that byte cannot end a run,
// moves the window past it or to the nearest position whose class holds
// it; when it can, it checks the window from its end, and a mismatch
// moves the window the same way. On text where the classes are rare that
// skips a window's length a step, where the DFA steps every byte.

// A classSeq finds windows of n bytes whose j-th byte is in class j.
type classSeq struct {
	n int
	// shift[j<<8|c] is 0 when c is in class j; otherwise the least d >= 1
	// such that c is in class j-d, or j+1 when there is none: how far the
	// window may move when its byte j is c (no window between holds a
	// run, as each would put c where its class does not hold it).
	shift []uint8
}

// A byteClass is a set of bytes.
type byteClass [256]bool

// maxSeq bounds a run's window (a longer required run is cut: any part of
// it is required too); minSeq is the shortest worth looking for.
const (
	maxSeq = 64
	minSeq = 4
)

func newClassSeq(classes []byteClass) *classSeq {
	n := len(classes)
	q := &classSeq{n: n, shift: make([]uint8, n<<8)}
	for j := range classes {
		for c := range 256 {
			if classes[j][c] {
				continue
			}
			d := 1
			for ; d <= j && !classes[j-d][c]; d++ {
			}
			q.shift[j<<8|c] = uint8(d)
		}
	}
	return q
}

// index returns the offset of the first run in b, or -1.
func (q *classSeq) index(b []byte) int {
	n := q.n
	last := (*[256]uint8)(q.shift[(n-1)<<8:])
	for i := n - 1; i < len(b); {
		// Three skips a step while the window stays inside b (a loop's
		// back edge costs more than a skip under wasm): a byte that can
		// end a run has shift 0, so the window stays on it.
		for i+3*n < len(b) {
			i += int(last[b[i]])
			i += int(last[b[i]])
			i += int(last[b[i]])
			if last[b[i]] == 0 {
				break
			}
		}
		for i < len(b) && last[b[i]] != 0 {
			i += int(last[b[i]])
		}
		if i >= len(b) {
			return -1
		}
		start := i - (n - 1)
		j := n - 2
		for ; j >= 0; j-- {
			if d := q.shift[j<<8|int(b[start+j])]; d != 0 {
				i += int(d)
				break
			}
		}
		if j < 0 {
			return start
		}
	}
	return -1
}

// A seqInfo is what a part of a pattern says about runs of byte classes
// in its matches.
type seqInfo struct {
	// fixed: every match of the part is a run of all (the classes, one a
	// byte), no more and no less; pre, suf and best are then all.
	fixed bool
	all   []byteClass
	// pre and suf are runs every match starts and ends with; best is the
	// longest run every match holds that was found.
	pre, suf, best []byteClass
	// asserts: the part holds an empty-width assertion (\b, ^, $), which
	// a run alone says nothing about.
	asserts bool
}

func fixedSeq(all []byteClass, asserts bool) seqInfo {
	if len(all) > maxSeq {
		return seqInfo{pre: all[:maxSeq], suf: all[len(all)-maxSeq:], best: all[:maxSeq], asserts: asserts}
	}
	return seqInfo{fixed: true, all: all, pre: all, suf: all, best: all, asserts: asserts}
}

// longest returns the longest of runs, the first of those.
func longest(runs ...[]byteClass) []byteClass {
	var best []byteClass
	for _, r := range runs {
		if len(r) > len(best) {
			best = r
		}
	}
	return best
}

// runeByteClass is the class of bytes a rune of a literal matches, when
// that is a set of ASCII bytes (folded: both cases of an ASCII letter
// whose case variants are all ASCII).
func runeByteClass(r rune, fold bool) (byteClass, bool) {
	var c byteClass
	if r >= utf8.RuneSelf || r == '\n' || fold && !asciiOrbit(r) {
		return c, false
	}
	c[r] = true
	if fold {
		c[lower(byte(r))], c[upper(byte(r))] = true, true
	}
	return c, true
}

// seqOf returns what re says about runs of byte classes in its matches.
func seqOf(re *syntax.Regexp) seqInfo {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return fixedSeq(nil, false)
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return fixedSeq(nil, true)
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		var out seqInfo
		var cur []byteClass
		cut := false
		for _, r := range re.Rune {
			c, ok := runeByteClass(r, fold)
			if ok {
				cur = append(cur, c)
				continue
			}
			if !cut {
				out.pre, cut = cur, true
			}
			out.best = longest(out.best, cur)
			cur = nil
		}
		if !cut {
			return fixedSeq(cur, false)
		}
		out.suf = cur
		out.best = longest(out.best, cur)
		return capSeq(out)
	case syntax.OpCharClass:
		var c byteClass
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1] >= utf8.RuneSelf {
				return seqInfo{}
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				c[r] = true
			}
		}
		return fixedSeq([]byteClass{c}, false)
	case syntax.OpCapture:
		return seqOf(re.Sub[0])
	case syntax.OpPlus:
		return repeatSeq(seqOf(re.Sub[0]), 1, -1)
	case syntax.OpRepeat:
		return repeatSeq(seqOf(re.Sub[0]), re.Min, re.Max)
	case syntax.OpConcat:
		out := seqInfo{fixed: true}
		// cur is the run that ends where the parts so far end, appended
		// to in place and cut to its last maxSeq classes when it passes
		// twice that (a pattern of thousands of parts costs each part
		// little).
		var cur []byteClass
		for _, sub := range re.Sub {
			s := seqOf(sub)
			out.asserts = out.asserts || s.asserts
			if s.fixed {
				cur = append(cur, s.all...)
				if len(cur) > 2*maxSeq {
					if out.fixed {
						out.fixed, out.pre = false, slices.Clone(cur[:maxSeq])
					}
					out.best = longest(out.best, slices.Clone(cur[:maxSeq]))
					cur = append(cur[:0], cur[len(cur)-maxSeq:]...)
				}
				continue
			}
			run := append(slices.Clone(cur), s.pre...)
			if out.fixed {
				out.fixed, out.pre = false, run
			}
			out.best = longest(out.best, run, s.best)
			cur = append(cur[:0], s.suf...)
		}
		if out.fixed {
			return fixedSeq(cur, out.asserts)
		}
		out.suf = cur
		out.best = longest(out.best, cur)
		return capSeq(out)
	}
	return seqInfo{}
}

// repeatSeq is seqOf of a part repeated min to max times (max -1: no
// bound).
func repeatSeq(s seqInfo, min, max int) seqInfo {
	if min == 0 {
		return seqInfo{asserts: s.asserts}
	}
	if !s.fixed {
		return seqInfo{pre: s.pre, suf: s.suf, best: s.best, asserts: s.asserts}
	}
	var all []byteClass
	for k := 0; k < min && len(all) <= maxSeq; k++ {
		all = append(all, s.all...)
	}
	out := fixedSeq(all, s.asserts)
	if max != min {
		out.fixed, out.all = false, nil
	}
	return out
}

// capSeq cuts runs to maxSeq: a prefix keeps its start, a suffix its end.
func capSeq(s seqInfo) seqInfo {
	if len(s.pre) > maxSeq {
		s.pre = s.pre[:maxSeq]
	}
	if len(s.suf) > maxSeq {
		s.suf = s.suf[len(s.suf)-maxSeq:]
	}
	if len(s.best) > maxSeq {
		s.best = s.best[:maxSeq]
	}
	return s
}

// trimEnd returns re with a repetition that ends it (x{n,m}, x+, x*)
// counted to its least (x{n}, x, empty): a line holds a match of one
// starting at some offset exactly when it holds a match of the other
// starting there (the longer match begins with the shorter). re is not
// changed.
func trimEnd(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return trimEnd(re.Sub[0])
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return re
		}
		c := *re
		c.Sub = append(slices.Clone(re.Sub[:len(re.Sub)-1]), trimEnd(re.Sub[len(re.Sub)-1]))
		return &c
	case syntax.OpPlus:
		return re.Sub[0]
	case syntax.OpStar, syntax.OpQuest:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpRepeat:
		c := *re
		c.Max = c.Min
		return &c
	}
	return re
}

// maxSeqShare is how common, as a share of text (byteShare), the bytes of
// a run's last class may be: the scan looks at that byte first, and where
// it is common a step moves little further than the DFA's.
const maxSeqShare = 0.5

// withSeq returns the prefilter for re: p (its literals' prefilter, or
// nil), or one that finds a run of byte classes every match holds
// (seqOf). Without p, the run is looked for alone when it is long enough
// and its last class rare enough to skip well; that prefilter is exact
// when re is the run and nothing more (its last repetition counted to its
// least, trimEnd): no assertion, no other part. When p looks for one
// literal that every run holds at the same offset (the '-' of
// `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`), each occurrence of it is kept only
// where the run holds it (runAround): most occurrences of a common byte
// then cost a few bytes' comparison, not a line for the DFA.
func withSeq(re *syntax.Regexp, p *prefilter) *prefilter {
	if p != nil && (p.one == nil || p.exact) {
		return p
	}
	s := seqOf(trimEnd(re))
	run := s.best
	if len(run) < minSeq {
		return p
	}
	if p != nil {
		if j := litAt(run, p.one.pat); j >= 0 {
			return &prefilter{one: p.one, seq: newClassSeq(run), seqAt: j}
		}
		return p
	}
	if byteShare(&run[len(run)-1]) > maxSeqShare {
		return nil
	}
	return &prefilter{seq: newClassSeq(run), exact: s.fixed && !s.asserts}
}

// litAt returns the first offset in run whose classes are lit's bytes,
// each class that one byte alone, or -1.
func litAt(run []byteClass, lit []byte) int {
	for j := 0; j+len(lit) <= len(run); j++ {
		ok := true
		for k, c := range lit {
			var one byteClass
			one[c] = true
			ok = ok && run[j+k] == one
		}
		if ok {
			return j
		}
	}
	return -1
}

// runAround returns where the first run of p.seq starts that holds p's
// literal at p.seqAt, or -1: every run holds it there, so each run is
// found at an occurrence of the literal.
func (p *prefilter) runAround(b []byte) int {
	q := p.seq
	for from := 0; ; {
		i := p.one.index(b[from:])
		if i < 0 {
			return -1
		}
		if s := from + i - p.seqAt; s >= 0 && s+q.n <= len(b) && q.at(b[s:]) {
			return s
		}
		from += i + 1
	}
}

// at reports whether b starts with a run.
func (q *classSeq) at(b []byte) bool {
	for j := range q.n {
		if q.shift[j<<8|int(b[j])] != 0 {
			return false
		}
	}
	return true
}

// byteShare estimates the share of text that c's bytes make up, taking a
// byte's frequency to double every 16 places of byteRank.
func byteShare(c *byteClass) float64 {
	var in, all float64
	for b := range 256 {
		w := math.Exp2(float64(byteRank[b]) / 16)
		all += w
		if c[b] {
			in += w
		}
	}
	return in / all
}
