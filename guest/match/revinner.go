package match

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// revInner decides a long line for a pattern that is a concatenation P L
// S around a literal L (the "reverse inner literal" of regex-automata's
// meta engine): it finds L's occurrences, and for each checks that P
// matches ending exactly where it starts, by an anchored DFA of P reversed
// run backwards from there, and that S matches starting where it ends,
// by an anchored DFA of S run forwards. The first occurrence that passes
// both holds a match; the text before it is never run through the DFA of
// the whole pattern (on one line of 50 MB of minified JSON whose match is
// at its end, that pass was the whole cost).
//
// It is exact only without empty-width assertions (^ $ \b \B) anywhere
// in the pattern: then a match is any string of P, then L, then S, and
// no scan needs to know what lies outside the text it reads.
//
// Its scans cannot cost more than a few passes over the line: a backward
// scan may not go back past the occurrence the previous one started from
// (no byte is read backwards twice), and the forward scans of S may read
// as many bytes in all as the line holds; where either bound is met, or
// the occurrences are too dense for the strategy to pay (revSpacing), the
// caller decides the line as before, with the DFA of the whole pattern.
type revInner struct {
	// lit finds L (ignoring ASCII case when the pattern folds it); n is
	// its length in bytes.
	lit *prefilter
	n   int
	// pre and suf are P (reversed) and S, nil when empty; built says the
	// DFAs below were made (at the first long line, not at Compile), ok
	// that they could be.
	pre, suf  *syntax.Regexp
	built, ok bool
	// rev is P reversed, run backwards from an occurrence; live is rev
	// whose matches do not end its scan (see start); fwd is S. Each is
	// nil when its part is empty.
	rev, live, fwd *dfa
	stop           func() bool
	// spacing is revSpacing, or 0 in tests, which hold the strategy to
	// regexp on text dense in literals too.
	spacing int
}

// The literal's occurrences are too dense for the strategy to pay when,
// from the revDenseMin-th on, they come more often than one every
// revSpacing bytes: each costs a search and two short scans, some 0.5 µs
// in the guest, where the DFA reads a byte in about 10 ns (a literal
// occurring every 20 bytes of a JSON line made the strategy 3x slower
// than the DFA).
const (
	revDenseMin = 32
	revSpacing  = 128
)

// revMinLine is the shortest line the reverse inner literal strategy
// decides: on shorter lines the DFA's pass over the line costs little,
// and Go source's lines must not pay for the literal search twice.
const revMinLine = 64 << 10

// newRevInner returns the strategy for re (the line-rewritten pattern
// without a leading or trailing .*), or nil when it does not apply: re is
// not a concatenation holding a literal worth searching for, or it holds
// an empty-width assertion.
func newRevInner(re *syntax.Regexp) *revInner {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat || hasAssertion(re) {
		return nil
	}
	best, bestCost, a, b := -1, 0, 0, 0
	for i, sub := range re.Sub {
		if sub.Op != syntax.OpLiteral {
			continue
		}
		fold := sub.Flags&syntax.FoldCase != 0
		x, y := searchableRun(sub.Rune, fold)
		if x == y {
			continue
		}
		if c := setCost([]lit{{b: []byte(string(sub.Rune[x:y])), fold: fold}}); best < 0 || c < bestCost {
			best, bestCost, a, b = i, c, x, y
		}
	}
	if best < 0 {
		return nil
	}
	l := re.Sub[best]
	fold := l.Flags&syntax.FoldCase != 0
	lb := []byte(string(l.Rune[a:b]))
	if len(lb) == 1 && foldRank(lb[0], fold) > maxOneByteRank {
		return nil // a common byte: its occurrences are everywhere
	}
	r := &revInner{n: len(lb), spacing: revSpacing}
	if fold {
		r.lit = foldFinder(lb)
	} else {
		r.lit = &prefilter{one: newFinder(lb)}
	}
	part := func(l *syntax.Regexp, runes []rune) *syntax.Regexp {
		return &syntax.Regexp{Op: syntax.OpLiteral, Rune: runes, Flags: l.Flags}
	}
	pre := slices.Clone(re.Sub[:best])
	if a > 0 {
		pre = append(pre, part(l, l.Rune[:a]))
	}
	var suf []*syntax.Regexp
	if b < len(l.Rune) {
		suf = append(suf, part(l, l.Rune[b:]))
	}
	suf = append(suf, re.Sub[best+1:]...)
	if len(pre) > 0 {
		r.pre = reverseRegexp(&syntax.Regexp{Op: syntax.OpConcat, Sub: pre})
	}
	if len(suf) > 0 {
		r.suf = &syntax.Regexp{Op: syntax.OpConcat, Sub: suf}
	}
	return r
}

// hasAssertion reports whether re holds an empty-width assertion.
func hasAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if hasAssertion(sub) {
			return true
		}
	}
	return false
}

// reverseRegexp returns a copy of re that matches the reverse of the strings re
// matches (re holds no empty-width assertion).
func reverseRegexp(re *syntax.Regexp) *syntax.Regexp {
	c := *re
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		c.Sub[i] = reverseRegexp(sub)
	}
	switch re.Op {
	case syntax.OpLiteral:
		c.Rune = slices.Clone(re.Rune)
		slices.Reverse(c.Rune)
	case syntax.OpConcat:
		slices.Reverse(c.Sub)
	}
	return &c
}

// anchoredDFA returns an anchored DFA for re, or nil if re does not
// compile. With noMatch, reaching a match ends a thread instead of the
// scan.
func anchoredDFA(re *syntax.Regexp, noMatch bool, stop func() bool) *dfa {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil || len(prog.Inst) > MaxProgInsts {
		return nil
	}
	if noMatch {
		for i := range prog.Inst {
			if prog.Inst[i].Op == syntax.InstMatch {
				prog.Inst[i].Op = syntax.InstFail
			}
		}
	}
	d := newDFA(prog)
	d.anchored, d.noFail, d.stop = true, true, stop
	return d
}

// build makes the DFAs, once; it reports whether they could be made.
func (r *revInner) build() bool {
	if !r.built {
		r.built, r.ok = true, true
		if r.pre != nil {
			r.rev, r.live = anchoredDFA(r.pre, false, r.stop), anchoredDFA(r.pre, true, r.stop)
			r.ok = r.rev != nil && r.live != nil
		}
		if r.suf != nil {
			r.fwd = anchoredDFA(r.suf, false, r.stop)
			r.ok = r.ok && r.fwd != nil
		}
	}
	return r.ok
}

// setStop makes the strategy's scans ask stop now and then whether to
// give up.
func (r *revInner) setStop(stop func() bool) {
	r.stop = stop
	for _, d := range []*dfa{r.rev, r.live, r.fwd} {
		if d != nil {
			d.stop = stop
		}
	}
}

// decide reports whether line (no '\n' in it), in which L does not occur
// before offset first, holds a match: dfaMatch and the offset of the
// first occurrence of L that is part of a match, dfaNoMatch, dfaStopped,
// or dfaFailed when a scan met its bound and the caller must decide the
// line another way.
func (r *revInner) decide(line []byte, first int) (int, int) {
	if !r.build() {
		return 0, dfaFailed
	}
	bound := 0                 // backward scans stop here: the bytes before it were read already
	budget := len(line) + 1024 // bytes the forward scans may read in all
	for from, n := first, 1; from < len(line); n++ {
		i := r.lit.index(line[from:])
		if i < 0 {
			return 0, dfaNoMatch
		}
		o := from + i
		if n >= revDenseMin && o-first < n*r.spacing {
			return o, dfaFailed // the DFA's pass costs less
		}
		res := dfaMatch
		if r.rev != nil {
			_, res = r.rev.back(line, o, bound)
			bound = o
		}
		if res == dfaMatch && r.fwd != nil {
			res = r.fwd.forward(line, o+r.n, &budget)
		}
		if res != dfaNoMatch {
			return o, res
		}
		from = o + 1
	}
	return 0, dfaNoMatch
}

// start returns an offset at or before which every match of P that ends
// at o starts: where the backward scan of P from o has no thread left.
func (r *revInner) start(line []byte, o int) (int, int) {
	if r.live == nil {
		return o, dfaNoMatch
	}
	return r.live.back(line, o, 0)
}

// hasMatch reports whether the state at row offset s holds a match.
func (d *dfa) hasMatch(s int32) bool {
	for _, pc := range d.states[int(s)/d.stride].pcs {
		if d.prog.Inst[pc].Op == syntax.InstMatch {
			return true
		}
	}
	return false
}

// move returns the transition of the state at s on rune r, building it if
// need be, for the anchored scans (which take no acceleration). After a
// clear of the cache the state is found again; d.stopped says to stop.
func (d *dfa) move(s int32, r rune) int32 {
	var key uint64
	if r < utf8.RuneSelf {
		if ns := d.trans[int(s)+int(d.class[r])]; ns != transUnknown {
			return ns
		}
	} else {
		key = uint64(uint32(s))<<32 | uint64(d.runeClass(r))
		if ns, ok := d.runeTrans[key]; ok {
			return ns
		}
	}
	if d.full() {
		if s = d.dropCache(s, 0); d.stopped {
			return transDead
		}
		key = uint64(uint32(s))<<32 | uint64(d.runeClass(r))
	}
	ns := d.step(s, r)
	if r < utf8.RuneSelf {
		d.trans[int(s)+int(d.class[r])] = ns
	} else {
		d.runeTrans[key] = ns
	}
	return ns
}

// back runs the anchored DFA backwards over line from offset from (a rune
// boundary), decoding the runes as regexp decodes them forwards, down to
// bound at most. It returns dfaMatch when a match ends the scan (a string
// of the DFA's pattern, reversed, ends at from), dfaNoMatch when no thread
// is left, with where the scan stopped (every such string starts there or
// later), or when it reached the line's start; dfaFailed when it reached
// bound > 0 with threads left; dfaStopped when told to stop.
func (d *dfa) back(line []byte, from, bound int) (int, int) {
	d.stopped = false
	s := d.lineStart
	if d.hasMatch(s) {
		return from, dfaMatch
	}
	i := from
	for i > bound {
		// A rune boundary of the forward decoding: decoding backwards from
		// one (utf8.DecodeLastRune) finds the same runes.
		c := line[i-1]
		r, w := rune(c), 1
		if c >= utf8.RuneSelf {
			r, w = utf8.DecodeLastRune(line[:i])
		}
		ns := d.move(s, r)
		if d.stopped {
			return i, dfaStopped
		}
		i -= w
		switch ns {
		case transMatch:
			return i, dfaMatch
		case transDead:
			return i, dfaNoMatch
		}
		s = ns
	}
	if i == 0 {
		return 0, dfaNoMatch // a match starting at 0 ended the scan above
	}
	return i, dfaFailed
}

// forward runs the anchored DFA forwards over line from offset from to
// the line's end: dfaMatch when a match starts at from, dfaNoMatch when
// none does, dfaFailed when it would read more than budget bytes (budget
// is what is left of it), dfaStopped when told to stop.
func (d *dfa) forward(line []byte, from int, budget *int) int {
	d.stopped = false
	s := d.lineStart
	if d.hasMatch(s) {
		return dfaMatch
	}
	for i := from; i < len(line); {
		*budget--
		if *budget < 0 {
			return dfaFailed
		}
		c := line[i]
		r, w := rune(c), 1
		if c >= utf8.RuneSelf {
			r, w = utf8.DecodeRune(line[i:])
		}
		ns := d.move(s, r)
		if d.stopped {
			return dfaStopped
		}
		switch ns {
		case transMatch:
			return dfaMatch
		case transDead:
			return dfaNoMatch
		}
		s = ns
		i += w
	}
	if d.endStep(s) == transMatch {
		return dfaMatch
	}
	return dfaNoMatch
}
