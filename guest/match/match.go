// Package match finds the lines of a text that hold a match of an RE2
// pattern, with exactly the answers of Go's regexp run on each line alone,
// fast for every class of pattern inside the wasm guest.
//
// Go's regexp has no DFA: without a literal prefix it runs its NFA (or
// backtracker) over every byte, 100-250x slower than ripgrep in the guest.
// Third-party engines with a DFA (coregex, measured) disagree with regexp on
// Unicode classes, case folding, counted repetition and empty matches, and
// have pathological cases. So this package keeps regexp/syntax as the only
// parser and compiler and adds layers, each of which only narrows
// where to look:
//
//   - a prefilter: a set of literals one of which every match must contain
//     (a plain or case-folded literal, the branches of an alternation, the
//     rarest literal of a concatenation), found by scanning for each
//     literal's rarest byte, or Boyer-Moore-Horspool over the set when
//     those bytes are common, picks candidate lines. The byte scan is
//     indexByte: under wasm a loop in Go over four words a step, about
//     twice bytes.IndexByte's hand-written wasm (four bytes a step) in
//     wazero, where a loop's back edge costs more than its arithmetic. (A
//     test of two bytes per literal, one word a step, was tried and
//     dropped: it ran at half Horspool's speed.) A literal of two or
//     three bytes, too short for Horspool, whose rarest byte is common
//     ("0x", "err") is found by that word test for its first two bytes,
//     32 places a step (indexShort), not bytes.Index, which scans for
//     the first byte and soon falls back to a byte loop (BenchmarkNext
//     in wazero: `err` 7x, `\bctx\b` 3x, `0x[0-9a-fA-F]{8,}` 2x). A plain
//     literal needs nothing more. A pattern may also require a run of ASCII byte
//     classes (`[A-Z_]{12,}`: twelve of [A-Z_]; classseq.go): with no
//     literal it is found Horspool's way, skipping up to the run's length
//     a step where the DFA steps every byte, exactly when the pattern is
//     that run; with a literal the run holds (the '-' of a date), the
//     literal's occurrences outside a run are passed over. A case-folded
//     ASCII literal (`(?i)kelvin`) is found in one pass with its forms
//     beyond ASCII (the Kelvin sign, the long s): a run search over the
//     bytes its forms can hold at each offset, or, where two adjacent
//     runes that are ASCII in every form are rare ("lv"), a word scan for
//     that pair, each place found compared rune by rune (foldlit.go,
//     foldpair.go);
//   - a lazy DFA of its own (dfa.go), built state by state from the
//     compiled syntax.Prog, says whether a line matches, one table lookup
//     per ASCII byte. It steps over runes decoded the way regexp decodes
//     them (invalid UTF-8 is U+FFFD, one byte at a time) and tests runes
//     with the Prog's own Inst.MatchRune, so Unicode classes and case
//     folding are regexp's by construction; it only needs "is there a
//     match", so leftmost-first order and captures do not arise. When its
//     state cache fills it is cleared and the scan goes on; only when that
//     happens three times in a row too fast (under 10 bytes per state) does
//     it give up and regexp decide, line by line;
//   - on a line of 64 KiB or more, a pattern that is a concatenation P L S
//     around a literal L, with no ^, $, \b or \B anywhere, is decided by
//     the reverse inner literal strategy of regex-automata's meta engine
//     (revinner.go): each occurrence of L is checked by an anchored DFA
//     of P reversed, run backwards from it, and one of S run forwards
//     from its end, so the text before the match is not run through the
//     DFA (one line of 50 MB of minified JSON, its match at the end). No
//     byte is read backwards twice and the forward checks read at most
//     the line's length in all; past either bound, or where L occurs more
//     often than every 128 bytes, the DFA decides the line as before.
//     Start on such a line runs the DFA only from where the first match
//     can start, and finds what it found before (revEnd says why);
//   - a large literal set (a keyword list, more than 8 literals) is found
//     with Aho-Corasick (ac.go), exactly when the pattern is that set and
//     nothing more, else as a prefilter;
//   - regexp decides a line only where the DFA cannot (a program too big
//     for it, or a cache that kept filling), and only a line short enough
//     for it to decide in bounded time. Confirming each of the DFA's
//     lines with regexp too was measured first: regexp's per-call cost in
//     the guest made that 2-6x slower for patterns with many hit lines
//     (the alternation and case-insensitive rows of the benchmarks), so
//     the DFA's answers stand on their proof instead: the differential fuzz
//     target FuzzMatchesRegexp (pattern x text, line by line against
//     regexp) and TestCorpusMatchesRegexp (Go's own source, every
//     benchmark class) run in `make test`.
//
// Why not a DFA for everything: in the guest, a byte scan and Horspool
// skip over text several times faster than any per-byte loop, so the DFA
// runs only on the lines a prefilter picks, or, for a pattern with no
// usable literal, over the text with acceleration: a state that loops on
// itself for all but a few bytes skips to the next of them with IndexByte
// (so `^...` waits for the next line, `\p{Greek}` for the next non-ASCII
// byte).
//
// Lines are separated by '\n' only; a "\r" before it is part of the line, as
// for regexp on that line. Go's regexp matches U+FFFD (and so ".") against
// a byte of invalid UTF-8 where ripgrep does not: this package follows
// regexp, and whether to report such lines is grep's policy.
package match

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Matcher finds lines matching one pattern. It is not safe for concurrent
// use (the DFA fills its cache as it goes).
type Matcher struct {
	re *regexp.Regexp
	// lazy is re with every repetition made non-greedy, compiled at the
	// first call of Start (or nil if that failed).
	lazy     *regexp.Regexp
	lazyDone bool
	expr     string
	// literal is set when the pattern is a plain literal: finding it is the
	// whole search.
	literal *finder
	// pre, when set, finds candidate lines: every match holds one of its
	// literals.
	pre *prefilter
	// dfa decides whether a line matches; nil when the pattern's program is
	// too big for it (regexp then does the work).
	dfa *dfa
	// minLen is the fewest bytes a match spans: shorter lines cannot
	// match, and a pattern with a large one is searched line by line.
	minLen int
	// every: the pattern matches the empty string at the start of any
	// line, so every line matches (EveryLine).
	every bool
	// dotRunes, when not 0, says the pattern is only "." repeated: a line
	// matches when it holds at least this many runes (`.{1000}.{1000}`,
	// whose DFA states would hold a thread per rune counted).
	dotRunes int
	// dotNoFFFD: the "." of dotRunes does not match U+FFFD (grep's strict
	// form), so the runes are counted in runs between those.
	dotNoFFFD bool
	// progLen is the size of the DFA's program, for what regexp costs.
	progLen int
	// stop, when set, is asked now and then during long work whether to
	// give up (a deadline); stopped records that it said so.
	stop    func() bool
	stopped bool
	// preOff is set once an Aho-Corasick prefilter has proved no faster
	// than the DFA's own scan (judgePrefilter); preSeen and preLines count
	// the text it ran over and the bytes of its candidate lines.
	preOff            bool
	preSeen, preLines int
	preJudge          int // preJudgeBytes unless set (tests judge sooner)
	// lastLine, lastLen and lastAt remember the line an exact prefilter
	// last found and where in it, for Start.
	lastLine        *byte
	lastLen, lastAt int
	// dfaLine, dfaLen and dfaEnd remember the line the DFA last decided
	// matches, in the call of Next that returned it, and where the first
	// match in it ends: Start needs that on a long line, and finding it
	// again costs a second pass over megabytes.
	dfaLine        *byte
	dfaLen, dfaEnd int
	// pieces holds the matchers of Piece, by notBegin + 2*notEnd.
	pieces [4]*Matcher
	// rev, when set, decides lines of revMin bytes or more by the reverse
	// inner literal strategy (revinner.go); revMin is revMinLine unless
	// set (tests use it on short lines). revLine, revLen and revAt
	// remember the line it last decided matches, in the call of Next that
	// returned it, and where the occurrence of its literal that is part of
	// a match starts, for Start.
	rev           *revInner
	revMin        int
	revLine       *byte
	revLen, revAt int
	// preRev: the prefilter looks for rev's literal and nothing else, so
	// where it found a candidate line is where the literal first occurs.
	preRev bool
}

// MaxProgInsts bounds the program a pattern compiles to: the memory it
// needs (regexp's program, the DFA's and their scratch sets grow with it),
// not its length in bytes, is what bounds a pattern, and Compile refuses
// one past it, saying how to split it. A state of the DFA costs time in
// proportion to its threads, not to the program, so big programs (a
// keyword list of 10,000 words, about 85,000 instructions; a repetition
// counted to 1000) are the DFA's too, and none is left to regexp's NFA
// alone, which ran a 30,000-word list at a few lines a second.
const MaxProgInsts = 1 << 17

// maxRegexpLine is the longest line regexp decides (when the DFA has
// failed) or searches for a match's start: regexp has no clock check and
// runs at some KB/s in the guest, so longer lines are left to the DFA,
// which is told never to fail on them and looks at the clock.
const maxRegexpLine = 4 << 10

// maxRegexpWork bounds the line length times program size of a line
// regexp decides: its NFA may run every instruction at every byte.
const maxRegexpWork = 1 << 20

// minLenLines is the minimum match length from which a search goes line
// by line, skipping lines too short to match (`.{1000}.{1000}`).
const minLenLines = 64

// startWindow is how far around the end of the first match Start looks
// for its start on a line longer than maxRegexpLine.
const startWindow = 2 << 10

// Compile builds a matcher for an RE2 pattern with Go regexp semantics,
// applied to each line alone: no match spans a newline, ^ and \A match at
// the start of a line, $ and \z at its end. ignoreCase is (?i).
func Compile(pattern string, ignoreCase bool) (*Matcher, error) {
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, errors.New("invalid pattern: " + err.Error())
	}
	if r, ok := surrogate(tree); ok {
		// UTF-8 text cannot hold one, and regexp is not consistent about
		// them (^\x{D800} and \x{D800} disagree): refused, as ripgrep does.
		return nil, fmt.Errorf("invalid pattern: it names U+%04X, a UTF-16 surrogate, which is not a character (no UTF-8 text holds one)", r)
	}
	tree = withoutNewlines(tree)
	expr := tree.String()
	// The program regexp runs: the same parse and simplification of the
	// same string (regexp.Compile does exactly this), less a leading or
	// trailing .* (which changes no line's answer, and doubles the
	// threads of every state of the DFA). Made first, so that a pattern
	// past MaxProgInsts is refused before regexp compiles it too.
	var prog *syntax.Prog
	if t, err := syntax.Parse(stripDotStar(tree).String(), syntax.Perl); err == nil {
		if p, err := syntax.Compile(t.Simplify()); err == nil {
			if len(p.Inst) > MaxProgInsts {
				return nil, tooLarge(pattern, len(p.Inst))
			}
			prog = p
		}
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, errors.New("invalid pattern: " + err.Error())
	}
	m := &Matcher{re: re, expr: expr, every: prog != nil && (emptyWith(prog, syntax.EmptyBeginLine|syntax.EmptyBeginText) || emptyWith(prog, syntax.EmptyEndLine|syntax.EmptyEndText))}
	if prefix, complete := re.LiteralPrefix(); complete && usableLiteral(prefix) {
		m.literal = newFinder([]byte(prefix))
		return m, nil
	}
	if prog != nil {
		m.dfa = newDFA(prog)
		m.progLen = len(prog.Inst)
		m.rev, m.revMin = newRevInner(stripDotStar(tree)), revMinLine
	}
	m.pre = withSeq(tree, newPrefilter(tree))
	m.preRev = m.rev != nil && m.pre != nil && m.pre.same(m.rev.lit)
	m.minLen = minBytes(tree)
	if n, ok := dotRunes(tree); ok && n > 0 {
		m.dotRunes, m.minLen = n, n
		m.dotNoFFFD = hasOp(tree, syntax.OpCharClass) // the strict "."
	}
	return m, nil
}

// tooLarge is the refusal of a pattern whose program has insts
// instructions, past MaxProgInsts: the bound it met, and how to split it.
func tooLarge(pattern string, insts int) error {
	parts := insts/MaxProgInsts + 1
	how := "make it smaller (a counted repetition {n} compiles to n copies of what it repeats)"
	if alts := strings.Count(pattern, "|") + 1; alts > 1 {
		how = fmt.Sprintf("split its alternation into %d or more greps of about %d alternatives each", parts, (alts+parts-1)/parts)
	}
	return fmt.Errorf("pattern is too large: it compiles to %d instructions, and the limit is %d (the memory one pattern may take, not its length); %s", insts, MaxProgInsts, how)
}

// dotRunes reports whether re is "." (any rune but '\n') repeated and
// concatenated, and the fewest runes it matches: a line holding that many
// holds a match (any run of exactly that many is one).
func dotRunes(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpAnyCharNotNL:
		return 1, true
	case syntax.OpCharClass:
		// grep's strict form of "." (every rune but '\n' and U+FFFD, for
		// lines with invalid bytes) counts too: see runsOf.
		if r := re.Rune; len(r) == 6 && r[0] == 0 && r[1] == '\n'-1 && r[2] == '\n'+1 &&
			r[3] == utf8.RuneError-1 && r[4] == utf8.RuneError+1 && r[5] == utf8.MaxRune {
			return 1, true
		}
	case syntax.OpCapture:
		return dotRunes(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		_, ok := dotRunes(re.Sub[0])
		return 0, ok
	case syntax.OpPlus:
		return dotRunes(re.Sub[0])
	case syntax.OpRepeat:
		n, ok := dotRunes(re.Sub[0])
		return min(n*re.Min, 1<<20), ok
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			n, ok := dotRunes(sub)
			if !ok {
				return 0, false
			}
			total = min(total+n, 1<<20)
		}
		return total, true
	}
	return 0, false
}

// SetStop makes long searches ask stop, now and then, whether to give up:
// Next then reports no further line and Stopped reports true. grep passes
// its deadline, so that no single line or piece outlasts it.
func (m *Matcher) SetStop(stop func() bool) {
	m.stop = stop
	if m.dfa != nil {
		m.dfa.stop = stop
	}
	if m.rev != nil {
		m.rev.setStop(stop)
	}
}

// Piece returns the matcher for a piece of a line too long to hold whole:
// notBegin when the piece does not start the line (^ cannot match at its
// start), notEnd when it does not end it ($ cannot match at its end).
func (m *Matcher) Piece(notBegin, notEnd bool) *Matcher {
	k := b2i(notBegin) + 2*b2i(notEnd)
	if k == 0 {
		return m
	}
	if m.pieces[k] == nil {
		t, err := syntax.Parse(m.expr, syntax.Perl)
		if err == nil {
			t = withoutAnchors(t, notBegin, notEnd)
			m.pieces[k], err = Compile(t.String(), false)
		}
		if err != nil {
			m.pieces[k] = m // cannot happen: expr compiled once already
		}
		m.pieces[k].SetStop(m.stop)
	}
	return m.pieces[k]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withoutAnchors makes line-start (notBegin) or line-end (notEnd)
// assertions fail.
func withoutAnchors(re *syntax.Regexp, notBegin, notEnd bool) *syntax.Regexp {
	for i, sub := range re.Sub {
		re.Sub[i] = withoutAnchors(sub, notBegin, notEnd)
	}
	switch {
	case notBegin && (re.Op == syntax.OpBeginLine || re.Op == syntax.OpBeginText),
		notEnd && (re.Op == syntax.OpEndLine || re.Op == syntax.OpEndText):
		return &syntax.Regexp{Op: syntax.OpNoMatch}
	}
	return re
}

// EveryLine reports that every line matches, whatever it holds (`^`, `$`,
// `.*`, `x?`, the empty pattern): the pattern matches the empty string at
// the start of a line, where only ^ and \A are asked, or at its end, where
// only $ and \z are. A count of its matching lines is a count of lines.
func (m *Matcher) EveryLine() bool { return m.every }

// emptyWith reports whether prog reaches a match from its start through
// no rune and no empty-width test but those of ok (^ and \A hold at the
// start of every line, $ and \z at its end).
func emptyWith(prog *syntax.Prog, ok syntax.EmptyOp) bool {
	seen := make(map[uint32]bool)
	var reach func(pc uint32) bool
	reach = func(pc uint32) bool {
		for !seen[pc] {
			seen[pc] = true
			in := &prog.Inst[pc]
			switch in.Op {
			case syntax.InstMatch:
				return true
			case syntax.InstAlt, syntax.InstAltMatch:
				if reach(in.Arg) {
					return true
				}
			case syntax.InstNop, syntax.InstCapture:
			case syntax.InstEmptyWidth:
				if syntax.EmptyOp(in.Arg)&^ok != 0 {
					return false
				}
			default:
				return false
			}
			pc = in.Out
		}
		return false
	}
	return reach(uint32(prog.Start))
}

// Stopped reports whether a search gave up because stop said so: the
// lines it did not report are undecided, not known not to match.
func (m *Matcher) Stopped() bool { return m.stopped }

// minBytes returns the fewest bytes a match of re spans (a rune is at
// least one byte), capped at 1<<20.
func minBytes(re *syntax.Regexp) int {
	const capLen = 1 << 20
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minBytes(re.Sub[0])
	case syntax.OpRepeat:
		return min(capLen, re.Min*minBytes(re.Sub[0]))
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n = min(capLen, n+minBytes(sub))
		}
		return n
	case syntax.OpAlternate:
		n := capLen
		for _, sub := range re.Sub {
			n = min(n, minBytes(sub))
		}
		return n
	case syntax.OpNoMatch:
		return capLen
	}
	return 0
}

// Regexp is the compiled regexp that decides every hit: the pattern
// rewritten for single lines (see Compile), for match positions and -o.
func (m *Matcher) Regexp() *regexp.Regexp { return m.re }

// Start returns where the match Regexp().FindIndex(line) finds starts, or
// -1 when line holds none (on a line longer than maxRegexpLine, a match
// near where the first one ends; see below). It is cheaper: the leftmost match starts at the
// same place whatever the repetitions prefer, so it asks a copy of the
// pattern whose repetitions are all non-greedy, which stops at the
// shortest match instead of running on to the longest (for `[^ ]{200,}`
// over a line of 400 KB, the whole line times 200 threads).
func (m *Matcher) Start(line []byte) int {
	if !m.lazyDone {
		m.lazyDone = true
		if t, err := syntax.Parse(m.expr, syntax.Perl); err == nil {
			m.lazy, _ = regexp.Compile(nonGreedy(t).String())
		}
	}
	re := m.lazy
	if re == nil {
		re = m.re
	}
	if len(line) > maxRegexpLine && m.pre != nil && m.pre.exact {
		// Every occurrence of the set is a match: the one Next found when
		// it found this line, or the first one.
		if len(line) == m.lastLen && &line[0] == m.lastLine {
			return m.lastAt
		}
		return m.pre.index(line)
	}
	if len(line) > maxRegexpLine && m.dfa != nil {
		// regexp over a line of megabytes takes minutes in the guest: the
		// DFA finds where the first match ends, and regexp looks for its
		// start in a window around that. This is a hint for showing the
		// match, exact when the match is shorter than startWindow.
		end, res := m.firstEnd(line)
		switch res {
		case dfaStopped:
			m.stopped = true
			return -1
		case dfaNoMatch:
			return -1
		}
		lo, hi := max(0, end-startWindow), min(len(line), end+startWindow)
		if loc := re.FindIndex(line[lo:hi]); loc != nil {
			return lo + loc[0]
		}
		return end
	}
	if loc := re.FindIndex(line); loc != nil {
		return loc[0]
	}
	return -1
}

// firstEnd returns where dfa.first(line) finds the first match of a
// nonempty line, and dfaMatch, or dfaNoMatch or dfaStopped: remembered
// from the Next that returned the line, or found by the reverse inner
// literal strategy (revEnd), or by the DFA over the whole line.
func (m *Matcher) firstEnd(line []byte) (int, int) {
	if len(line) == m.dfaLen && &line[0] == m.dfaLine {
		return m.dfaEnd, dfaMatch // as first would find it again
	}
	if m.rev != nil && len(line) >= m.revMin {
		at, res := m.revAt, dfaMatch
		if len(line) != m.revLen || &line[0] != m.revLine {
			at, res = m.rev.decide(line, 0)
		}
		if res == dfaMatch {
			at, res = m.revEnd(line, at)
		}
		if res != dfaFailed {
			return at, res
		}
	}
	m.dfa.noFail = true
	end, res := m.dfa.first(line)
	m.dfa.noFail = false
	return end, res
}

// revEnd returns what dfa.first(line) returns for a line in which the
// first occurrence of the reverse inner literal that is part of a match
// is at o, reading only from where that match can start, or dfaFailed
// when it cannot tell. Every match of the line holds an occurrence at o
// or after, and those through o start at or after q (revInner.start):
// first run from q finds the end of the first of them, which is the first
// match's end unless a match through a later occurrence ends before it.
// Such a match ends at that occurrence's end or after, and first reports
// a match at most a rune (utf8.UTFMax bytes) before its end; so when no
// occurrence ends within end+utf8.UTFMax, the end found is first's.
// Without assertions in the pattern (revInner's condition), first from q
// runs exactly the threads that start at q or after, and q, where a
// backward scan stopped, is a rune boundary.
func (m *Matcher) revEnd(line []byte, o int) (int, int) {
	q, res := m.rev.start(line, o)
	if res == dfaStopped {
		return 0, res
	}
	m.dfa.noFail = true
	end, res := m.dfa.first(line[q:])
	m.dfa.noFail = false
	if res != dfaMatch {
		return 0, res // dfaStopped; dfaNoMatch cannot happen
	}
	end += q
	if hi := min(len(line), end+utf8.UTFMax); o+1 < hi && m.rev.lit.index(line[o+1:hi]) >= 0 {
		return 0, dfaFailed
	}
	return end, dfaMatch
}

// nonGreedy makes every repetition in re prefer fewer.
func nonGreedy(re *syntax.Regexp) *syntax.Regexp {
	for _, sub := range re.Sub {
		nonGreedy(sub)
	}
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		re.Flags |= syntax.NonGreedy
	}
	return re
}

// Next returns the bounds [start,end) of the first line in buf that holds a
// match, end excluding the '\n'. buf holds whole lines; text after its last
// '\n' is a line when it is not empty. ok is false when no line matches.
func (m *Matcher) Next(buf []byte) (start, end int, ok bool) {
	m.dfaLine, m.revLine = nil, nil
	if m.literal != nil {
		i := m.literal.index(buf)
		if i < 0 {
			return 0, 0, false
		}
		start, end = lineAround(buf, i)
		return start, end, true
	}
	if m.pre != nil && !m.preOff {
		return m.nextCandidate(buf)
	}
	return m.scan(buf)
}

// preJudgeBytes is how much text an Aho-Corasick prefilter runs over
// before it is judged (preDense), and again after every such stretch.
const preJudgeBytes = 1 << 20

// preDense is the share of the text, in eighths, that candidate lines may
// hold before an Aho-Corasick prefilter is dropped for the DFA's own scan.
// Aho-Corasick costs a table lookup per byte, as the DFA does, so it only
// pays where it skips most of the text: on prose holding a keyword list's
// words inside longer ones (`(300 words)`), every line was a
// candidate and the DFA read each twice, 1.6x the DFA's scan alone.
const preDense = 2

// judgePrefilter counts a candidate line (lineBytes of it, after advanced
// bytes of text) and, past preJudgeBytes, drops a dense Aho-Corasick
// prefilter: it reports whether Next should scan with the DFA from now on.
// Other prefilters skip text much faster than the DFA and stay.
func (m *Matcher) judgePrefilter(advanced, lineBytes int) bool {
	if m.pre.ac == nil && m.pre.seq == nil || m.pre.exact || m.dfa == nil {
		return false
	}
	m.preSeen += advanced
	m.preLines += lineBytes
	judge := preJudgeBytes
	if m.preJudge > 0 {
		judge = m.preJudge
	}
	if m.preSeen < judge {
		return false
	}
	m.preOff = m.preLines*8 > m.preSeen*preDense
	m.preSeen, m.preLines = 0, 0
	return m.preOff
}

// nextCandidate runs the prefilter, then checks each candidate line.
func (m *Matcher) nextCandidate(buf []byte) (int, int, bool) {
	for from := 0; from < len(buf); {
		i := m.pre.index(buf[from:])
		if i < 0 {
			return 0, 0, false
		}
		s, e := lineAround(buf, from+i)
		if m.pre.exact {
			if e > s {
				m.lastLine, m.lastLen, m.lastAt = &buf[s], e-s, from+i-s
			}
			return s, e, true
		}
		next := min(e+1, len(buf))
		first := 0 // where the line's first occurrence of rev's literal may be
		if m.preRev {
			first = from + i - s
		}
		if m.lineMatches(buf[s:e], first) {
			m.judgePrefilter(next-from, e-s) // the next call scans if it said so
			return s, e, true
		}
		if m.stopped {
			return 0, 0, false
		}
		if m.judgePrefilter(next-from, e-s) {
			s, e, ok := m.scan(buf[next:])
			return s + next, e + next, ok
		}
		from = next
	}
	return 0, 0, false
}

// lineMatches decides one line (no '\n' in it): the reverse inner literal
// strategy on a long line (its literal does not occur before offset
// first), the DFA, unless it has failed too often in this buffer, else
// decideLine.
func (m *Matcher) lineMatches(line []byte, first int) bool {
	if len(line) < m.minLen {
		return false
	}
	if m.dotRunes > 0 {
		if m.dotNoFFFD {
			return longestRun(line) >= m.dotRunes
		}
		return utf8.RuneCount(line) >= m.dotRunes // an invalid byte is a rune, U+FFFD, as for regexp
	}
	if m.rev != nil && len(line) >= m.revMin {
		switch at, res := m.rev.decide(line, first); res {
		case dfaMatch:
			m.revLine, m.revLen, m.revAt = &line[0], len(line), at
			return true
		case dfaNoMatch:
			return false
		case dfaStopped:
			m.stopped = true
			return false
		}
	}
	if m.dfa != nil && m.dfa.failures < maxFailures {
		end, res := m.dfa.matchLineAt(line)
		switch res {
		case dfaMatch:
			if len(line) > 0 {
				m.dfaLine, m.dfaLen, m.dfaEnd = &line[0], len(line), end
			}
			return true
		case dfaNoMatch:
			return false
		case dfaStopped:
			m.stopped = true
			return false
		}
	}
	return m.decideLine(line)
}

// decideLine decides a line the DFA gave up on: regexp, on a line short
// enough for it to decide in bounded time, else the DFA told not to fail.
func (m *Matcher) decideLine(line []byte) bool {
	if len(line) < m.minLen {
		return false
	}
	if m.dfa == nil || len(line) <= maxRegexpLine && len(line)*m.progLen <= maxRegexpWork {
		return m.re.Match(line)
	}
	m.dfa.noFail = true
	res := m.dfa.matchLine(line)
	m.dfa.noFail = false
	if res == dfaStopped {
		m.stopped = true
	}
	return res == dfaMatch
}

// scan finds the first line the DFA (or, without one, regexp) says
// matches. Where the DFA gives up, decideLine decides that line and the
// DFA goes on after it; after maxFailures in a row, the rest of buf is
// decided line by line.
func (m *Matcher) scan(buf []byte) (int, int, bool) {
	if m.dfa == nil || m.minLen >= minLenLines || m.dotRunes > 0 {
		return m.scanLines(buf)
	}
	for from := 0; from < len(buf); {
		if m.dfa.failures >= maxFailures {
			s, e, ok := m.scanLines(buf[from:])
			m.dfa.failures = 0 // the next buffer may suit the DFA better
			return s + from, e + from, ok
		}
		i, res := m.dfa.first(buf[from:])
		switch res {
		case dfaNoMatch:
			return 0, 0, false
		case dfaStopped:
			m.stopped = true
			return 0, 0, false
		}
		s, e := lineAround(buf, from+i)
		if res == dfaMatch || m.decideLine(buf[s:e]) {
			return s, e, true
		}
		if m.stopped {
			return 0, 0, false
		}
		from = e + 1
	}
	return 0, 0, false
}

// scanLines decides buf line by line (lineMatches), skipping the lines too
// short to match, asking stop every stopBytes of lines regexp decided.
func (m *Matcher) scanLines(buf []byte) (int, int, bool) {
	const stopBytes = 16 << 10
	work := 0
	for s := 0; s < len(buf); {
		e := bytes.IndexByte(buf[s:], '\n')
		if e < 0 {
			e = len(buf)
		} else {
			e += s
		}
		if e-s >= m.minLen {
			if m.lineMatches(buf[s:e], 0) {
				return s, e, true
			}
			if m.stopped {
				return 0, 0, false
			}
			if m.dfa == nil || m.dfa.failures >= maxFailures {
				if work += e - s + 64; work >= stopBytes {
					work = 0
					if m.stop != nil && m.stop() {
						m.stopped = true
						return 0, 0, false
					}
				}
			}
		}
		s = e + 1
	}
	return 0, 0, false
}

// lineAround returns the bounds of the line of b holding offset i, without
// its newline.
func lineAround(b []byte, i int) (start, end int) {
	start = LastNewline(b[:i]) + 1
	end = bytes.IndexByte(b[i:], '\n')
	if end < 0 {
		return start, len(b)
	}
	return start, end + i
}

// usableLiteral reports whether searching for s with bytes.Index finds
// what the regexp finds: not for "", and not when s holds U+FFFD, which the
// regexp also matches against any invalid UTF-8 byte.
func usableLiteral(s string) bool {
	return s != "" && !strings.ContainsRune(s, utf8.RuneError)
}

// withoutNewlines rewrites a parsed regexp so that it cannot match "\n"
// and its text anchors are line anchors: run over a block of lines, it
// finds what it finds on each line alone.
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

// surrogate returns a UTF-16 surrogate code point (U+D800-U+DFFF) that the
// pattern names: a literal one, or a class that starts or ends on one.
func surrogate(re *syntax.Regexp) (rune, bool) {
	isSur := func(r rune) bool { return 0xD800 <= r && r <= 0xDFFF }
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if isSur(r) {
				return r, true
			}
		}
	case syntax.OpCharClass:
		for _, r := range re.Rune {
			if isSur(r) {
				return r, true
			}
		}
	}
	for _, sub := range re.Sub {
		if r, ok := surrogate(sub); ok {
			return r, true
		}
	}
	return 0, false
}

// stripDotStar returns re without the repetitions of any rune but '\n',
// zero or more times, that begin or end it: a line holds a match of
// `.*x.*` where it holds one of x (both can take .* as empty, and x's
// assertions see the same text around it). re itself is not changed.
func stripDotStar(re *syntax.Regexp) *syntax.Regexp {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return re
	}
	sub := re.Sub
	for len(sub) > 1 && isDotStar(sub[0]) {
		sub = sub[1:]
	}
	for len(sub) > 1 && isDotStar(sub[len(sub)-1]) {
		sub = sub[:len(sub)-1]
	}
	if len(sub) == len(re.Sub) {
		return re
	}
	c := *re
	c.Sub = sub
	return &c
}

// isDotStar reports whether re is x* for an x matching every rune but '\n'.
func isDotStar(re *syntax.Regexp) bool {
	if re.Op != syntax.OpStar {
		return false
	}
	x := re.Sub[0]
	switch x.Op {
	case syntax.OpAnyCharNotNL:
		return true
	case syntax.OpCharClass:
		r := x.Rune
		return len(r) == 4 && r[0] == 0 && r[1] == '\n'-1 && r[2] == '\n'+1 && r[3] == utf8.MaxRune
	}
	return false
}

// longestRun returns the most runes in a row in line that are not U+FFFD
// (an invalid byte decodes as one).
func longestRun(line []byte) int {
	best, run := 0, 0
	for i := 0; i < len(line); {
		r, w := utf8.DecodeRune(line[i:])
		i += w
		if r == utf8.RuneError {
			run = 0
			continue
		}
		run++
		best = max(best, run)
	}
	return best
}

// hasOp reports whether op occurs in re.
func hasOp(re *syntax.Regexp, op syntax.Op) bool {
	if re.Op == op {
		return true
	}
	for _, sub := range re.Sub {
		if hasOp(sub, op) {
			return true
		}
	}
	return false
}

// LastNewline is bytes.LastIndexByte(b, '\n'), eight bytes at a time:
// under wasm LastIndexByte is a byte loop, and a hit at the end of a line
// of megabytes looks back over all of it (grep's reads do too).
func LastNewline(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := len(b)
	for ; i >= 8; i -= 8 {
		w := binary.LittleEndian.Uint64(b[i-8:]) ^ ('\n' * ones)
		if (w-ones)&^w&highs != 0 {
			break // a zero byte, a newline, among these eight
		}
	}
	for i--; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}
