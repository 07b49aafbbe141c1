package match

import (
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// dfa answers "does this line match" for a compiled syntax.Prog, building
// its states lazily as the text needs them (the way RE2 does). A state is
// the set of the Prog's threads that are alive before the next rune (their
// Rune, Match and not yet decided EmptyWidth instructions), plus what the
// empty-width assertions need to know of the past: whether this is the
// start of the line and whether the previous rune was a word character.
// Search is unanchored: every state also holds the Prog's start.
//
// Transitions on ASCII bytes are cached in a table indexed by byte class;
// other runes are decoded as regexp decodes them and their transitions
// cached in a map. The cache is bounded: when it fills it is cleared and
// the scan goes on, and when that happens too often for the text it has
// scanned the DFA declares itself failed and the caller uses regexp.
type dfa struct {
	prog  *syntax.Prog
	class [256]uint8 // byte -> byte class
	rep   []byte     // a byte of each class
	// stride is the width of a state's row in trans: one entry per class
	// (the last for bytes beyond ASCII, always transSlow), then the state's
	// acceleration entry and its transition at the end of a line.
	stride int
	// usesBegin and usesWord say whether states must remember the line
	// start and the previous rune's wordness (fewer states when not).
	usesBegin, usesWord bool

	states []dstate
	// trans holds each state's row; entries are the next state's row
	// offset, or unknown or matched.
	trans     []int32
	index     map[string]int32 // state key -> row offset
	runeTrans map[uint64]int32 // row offset<<32 | rune class -> next row offset
	// runeBounds splits the runes beyond ASCII into classes that every
	// rune instruction treats alike: class k is [runeBounds[k],
	// runeBounds[k+1]). Without them every distinct rune of a text in
	// another script would need its own cache entries.
	runeBounds []rune
	lineStart  int32 // row offset of the state at a line's start

	maxStates int // maxStates, or fewer in tests
	scanned   int // bytes scanned since the cache was last cleared
	mark      int // offset in the buffer at hand where scanned was last brought up to date
	threads   int // the states' threads in all
	// lowClears counts clears in a row that came after fewer than
	// minBytesPerState bytes per state.
	lowClears int
	// failed says the cache filled too fast on the current text: the
	// caller has regexp decide the line at hand, and the next scan starts
	// afresh. failures counts failures in a row: after maxFailures the
	// caller lets regexp decide the rest of its buffer, line by line.
	failed   bool
	failures int
	// noFail makes the DFA go on clearing its cache however often it
	// fills, for a line too long for regexp to decide in bounded time.
	noFail bool
	// anchored makes the DFA match only from where its scan starts (it
	// does not take the Prog's start again at every rune): a state with no
	// thread left is transDead. The reverse inner literal strategy's
	// scans (revinner.go) are anchored.
	anchored bool
	// stop, when set, is called every stopEvery states built and at every
	// clear; when it returns true the scan ends with dfaStopped.
	stop    func() bool
	built   int
	stopped bool

	// Scratch space for building states.
	set1, set2 sparseSet
	stack      []uint32
	key        []byte
	accel      []accelSet
}

// A dstate is one DFA state.
type dstate struct {
	pcs   []uint32 // sorted; Rune*, Match and EmptyWidth instructions only
	flags uint8
}

const (
	flagLineStart = 1 << iota // at the start of a line
	flagPrevWord              // the previous rune is a word character
)

// Entries of trans besides row offsets.
const (
	transUnknown = -1
	transMatch   = -2
	transSlow    = -4 // a byte beyond ASCII: decode the rune
	transDead    = -5 // an anchored DFA has no thread left
	// tagAccel marks an entry leading to a state that may skip ahead.
	tagAccel = 1 << 30
	// In a row's acceleration entry: not computed yet, or not accelerable.
	accelUnknown = -1
	accelNone    = -3
)

// Cache bounds: states and the cache's memory in all (its rows, its
// states' threads and keys, its non-ASCII transitions) kept before the
// cache is cleared. A cleared cache goes on from the state at hand (as
// RE2's and regex-automata's do): a text whose states outnumber the cache
// still gets a DFA, paying to rebuild states. Only when the cache has been
// cleared minClears times in a row with fewer than minBytesPerState bytes
// scanned per state built does the DFA give up for regexp, which then
// decides one line at a time.
const (
	maxStates        = 1 << 15
	maxCacheBytes    = 8 << 20
	maxRuneTrans     = 1 << 15
	minBytesPerState = 10
	minClears        = 3
	maxAccelEscapes  = 3
	maxFailures      = 8
	// stopEvery is how many states are built between two calls of the
	// stop function: a state of a big program costs microseconds.
	stopEvery = 256
)

// What first and matchLine found.
const (
	dfaNoMatch = iota
	dfaMatch
	dfaFailed
	// dfaStopped: the stop function said to stop (a deadline passed).
	dfaStopped
)

// endOfLine is the rune step takes at the end of a line.
const endOfLine = -1

func newDFA(prog *syntax.Prog) *dfa {
	d := &dfa{prog: prog, maxStates: maxStates}
	n := len(prog.Inst)
	d.set1 = newSparseSet(n)
	d.set2 = newSparseSet(n)
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth {
			op := syntax.EmptyOp(in.Arg)
			if op&(syntax.EmptyBeginLine|syntax.EmptyBeginText) != 0 {
				d.usesBegin = true
			}
			if op&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
				d.usesWord = true
			}
		}
	}
	// Byte classes: bytes that every rune instruction treats alike, alike
	// in wordness, and '\n' alone.
	// A repetition's copies share one rune slice ({1,1000} of \pL is a
	// thousand instructions and one class): each distinct one is asked once.
	ins := distinctRuneInsts(prog)
	sigs := map[string]uint8{}
	sig := make([]byte, 0, len(ins)+2)
	for c := 0; c < utf8.RuneSelf; c++ {
		sig = sig[:0]
		sig = append(sig, b2u(c == '\n'), b2u(d.usesWord && syntax.IsWordChar(rune(c))))
		for _, in := range ins {
			sig = append(sig, b2u(in.MatchRune(rune(c))))
		}
		k, ok := sigs[string(sig)]
		if !ok {
			k = uint8(len(d.rep))
			sigs[string(sig)] = k
			d.rep = append(d.rep, byte(c))
		}
		d.class[c] = k
	}
	for c := utf8.RuneSelf; c < 256; c++ {
		d.class[c] = uint8(len(d.rep))
	}
	d.stride = len(d.rep) + 3
	d.runeBounds = runeBounds(prog)
	d.reset()
	return d
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// runeBounds returns the bounds of the classes of runes beyond ASCII
// (see dfa.runeBounds): every rune an instruction names, every end of
// its ranges, and every case variant of a folded rune starts a class.
func runeBounds(prog *syntax.Prog) []rune {
	b := []rune{utf8.RuneSelf, unicode.MaxRune + 1}
	add := func(lo, hi rune) { // the runes lo..hi form a class apart
		if hi >= utf8.RuneSelf {
			b = append(b, max(lo, utf8.RuneSelf), hi+1)
		}
	}
	for _, in := range distinctRuneInsts(prog) {
		switch in.Op {
		case syntax.InstRune1:
			add(in.Rune[0], in.Rune[0])
		case syntax.InstRune:
			if len(in.Rune) == 1 {
				r := in.Rune[0]
				add(r, r)
				if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
					for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
						add(f, f)
					}
				}
				continue
			}
			for j := 0; j+1 < len(in.Rune); j += 2 {
				add(in.Rune[j], in.Rune[j+1])
			}
		}
	}
	slices.Sort(b)
	return slices.Compact(b)
}

// distinctRuneInsts returns the rune instructions of prog that test runes
// differently: one of those sharing a rune slice and flags, one of each
// other kind.
func distinctRuneInsts(prog *syntax.Prog) []*syntax.Inst {
	type key struct {
		runes string // the rune slice's contents, four bytes a rune
		op    syntax.InstOp
		fold  bool
	}
	seen := map[key]bool{}
	var out []*syntax.Inst
	var buf []byte
	for i := range prog.Inst {
		in := &prog.Inst[i]
		k := key{op: in.Op}
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1:
			// By content, not by slice: a keyword list's factored
			// alternation has a class of its own ([cd] of ab[cd]) at
			// each of tens of thousands of instructions, most alike.
			buf = buf[:0]
			for _, r := range in.Rune {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(r))
			}
			k.runes = string(buf)
			k.fold = syntax.Flags(in.Arg)&syntax.FoldCase != 0
		case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		default:
			continue
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, in)
		}
	}
	return out
}

// runeClass is the class of a rune beyond ASCII.
func (d *dfa) runeClass(r rune) uint32 {
	k, found := slices.BinarySearch(d.runeBounds, r)
	if !found {
		k--
	}
	return uint32(k)
}

// reset drops every state and builds the line-start state again.
func (d *dfa) reset() {
	d.states = d.states[:0]
	d.trans = d.trans[:0]
	d.accel = d.accel[:0]
	d.index = map[string]int32{}
	d.runeTrans = map[uint64]int32{}
	d.scanned = 0
	d.threads = 0
	s := &d.set1
	s.clear()
	d.addThread(s, uint32(d.prog.Start), 0, false)
	flags := uint8(0)
	if d.usesBegin {
		flags = flagLineStart
	}
	d.lineStart = d.intern(s, flags)
}

// intern returns the row offset of the state of the threads in s.
func (d *dfa) intern(s *sparseSet, flags uint8) int32 {
	pcs := s.dense
	slices.Sort(pcs)
	d.key = append(d.key[:0], flags)
	for _, pc := range pcs {
		d.key = append(d.key, byte(pc), byte(pc>>8), byte(pc>>16))
	}
	if off, ok := d.index[string(d.key)]; ok {
		return off
	}
	off := int32(len(d.trans))
	if d.built++; d.stop != nil && d.built%stopEvery == 0 && d.stop() {
		d.stopped = true
	}
	d.index[string(d.key)] = off
	d.states = append(d.states, dstate{pcs: slices.Clone(pcs), flags: flags})
	d.threads += len(pcs)
	for range d.stride {
		d.trans = append(d.trans, transUnknown)
	}
	d.trans[int(off)+d.stride-3] = transSlow
	d.trans[int(off)+d.stride-2] = accelUnknown
	return off
}

// addThread adds pc and what it leads to without consuming input to s,
// keeping only instructions that wait for input. EmptyWidth instructions
// are followed when follow is set and the assertions at hold.
func (d *dfa) addThread(s *sparseSet, pc uint32, at syntax.EmptyOp, follow bool) {
	stk := append(d.stack[:0], pc)
	for len(stk) > 0 {
		pc := stk[len(stk)-1]
		stk = stk[:len(stk)-1]
		if s.has(pc) {
			continue
		}
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			s.mark(pc)
			stk = append(stk, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			s.mark(pc)
			stk = append(stk, in.Out)
		case syntax.InstFail:
			s.mark(pc)
		case syntax.InstEmptyWidth:
			s.add(pc)
			if follow && syntax.EmptyOp(in.Arg)&^at == 0 {
				stk = append(stk, in.Out)
			}
		default: // Rune*, Match
			s.add(pc)
		}
	}
	d.stack = stk
}

// step computes the transition of the state at row offset off on rune r
// (endOfLine at the end of a line or for '\n'): the next state's row
// offset, or transMatch when a match ends before or at r.
func (d *dfa) step(off int32, r rune) int32 {
	st := &d.states[int(off)/d.stride]
	// The assertions that hold between the previous rune and r.
	var at syntax.EmptyOp
	if st.flags&flagLineStart != 0 {
		at |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if r == endOfLine {
		at |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	if (st.flags&flagPrevWord != 0) != (r >= 0 && syntax.IsWordChar(r)) {
		at |= syntax.EmptyWordBoundary
	} else {
		at |= syntax.EmptyNoWordBoundary
	}
	cur := &d.set1
	cur.clear()
	for _, pc := range st.pcs {
		d.addThread(cur, pc, at, true)
	}
	for _, pc := range cur.dense {
		if d.prog.Inst[pc].Op == syntax.InstMatch {
			return transMatch
		}
	}
	if r == endOfLine {
		if d.anchored {
			return transDead
		}
		return d.lineStart
	}
	next := &d.set2
	next.clear()
	for _, pc := range cur.dense {
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if in.MatchRune(r) {
				d.addThread(next, in.Out, 0, false)
			}
		}
	}
	if !d.anchored {
		d.addThread(next, uint32(d.prog.Start), 0, false)
	}
	for _, pc := range next.dense {
		if d.prog.Inst[pc].Op == syntax.InstMatch {
			return transMatch
		}
	}
	if len(next.dense) == 0 && d.anchored {
		return transDead
	}
	var flags uint8
	if d.usesWord && syntax.IsWordChar(r) {
		flags = flagPrevWord
	}
	return d.intern(next, flags)
}

// full reports whether the cache must be cleared before adding a state.
func (d *dfa) full() bool {
	return len(d.states) >= d.maxStates || len(d.runeTrans) >= maxRuneTrans || d.cacheBytes() >= maxCacheBytes
}

// cacheBytes estimates the cache's memory: rows, threads with their keys,
// the map entries of states and non-ASCII transitions.
func (d *dfa) cacheBytes() int {
	return 4*len(d.trans) + 7*d.threads + 64*len(d.states) + 24*len(d.runeTrans)
}

// dropCache clears the cache keeping the state at off, whose new row
// offset it returns; i is the offset reached in the buffer at hand. It
// marks the DFA failed when the cache fills too fast (see minClears) or
// stopped when told to stop.
func (d *dfa) dropCache(off int32, i int) int32 {
	since := d.scanned + i - d.mark
	if since < minBytesPerState*len(d.states) {
		d.lowClears++
	} else {
		d.lowClears = 0
	}
	if d.stop != nil && d.stop() {
		d.stopped = true
		return 0
	}
	if d.lowClears >= minClears && !d.noFail {
		d.lowClears = 0
		d.failed = true
		d.failures++
		return 0
	}
	st := d.states[int(off)/d.stride]
	d.reset()
	d.mark = i
	s := &d.set1
	s.clear()
	for _, pc := range st.pcs {
		s.add(pc)
	}
	return d.intern(s, st.flags)
}

// first returns an offset inside the first line of buf that matches and
// dfaMatch, or dfaNoMatch, or dfaFailed and an offset in the line where
// the DFA gave up (lines before it do not match; regexp must decide that
// one).
//
// The loop does one table lookup per ASCII byte. An entry tagged with
// tagAccel leads to a state that may skip ahead (or is not yet known not
// to): only those leave the loop's fast path, and an entry found to lead
// to a state that cannot skip loses its tag.
func (d *dfa) first(buf []byte) (int, int) {
	if d.failed {
		d.failed = false
		d.reset()
	}
	d.mark = 0
	d.stopped = false
	trans := d.trans
	class := &d.class
	s := d.lineStart
	var cache accelCache
	n := len(buf)
	i := d.accelerate(s, buf, 0, &cache)
	trans = d.trans
	for i < n {
		if cache.denseAt(i) {
			// Acceleration does not pay here (accelCache.judge): the
			// entries into accelerable states are taken as plain ones.
			i, s = d.denseRun(buf[:min(n, cache.denseEnd)], i, s)
		}
		// Four bytes a step while every entry is a plain state (the
		// loop's own overhead is much of its cost under wasm).
		for ; i+4 <= n; i += 4 {
			b := buf[i : i+4 : i+4]
			n0 := trans[int(s)+int(class[b[0]])]
			if uint32(n0) >= tagAccel {
				break
			}
			n1 := trans[int(n0)+int(class[b[1]])]
			if uint32(n1) >= tagAccel {
				s, i = n0, i+1
				break
			}
			n2 := trans[int(n1)+int(class[b[2]])]
			if uint32(n2) >= tagAccel {
				s, i = n1, i+2
				break
			}
			n3 := trans[int(n2)+int(class[b[3]])]
			if uint32(n3) >= tagAccel {
				s, i = n2, i+3
				break
			}
			s = n3
		}
		if i >= n {
			break
		}
		c := buf[i]
		ns := trans[int(s)+int(class[c])]
		if uint32(ns) < tagAccel {
			s = ns
			i++
			continue
		}
		if ns >= 0 {
			// A state that may skip ahead.
			ns &^= tagAccel
			a := trans[int(ns)+d.stride-2]
			if a == accelNone {
				trans[int(s)+int(class[c])] = ns
			}
			s = ns
			i = d.accelerate(s, buf, i+1, &cache)
			trans = d.trans
			continue
		}
		w := 1
		switch ns {
		case transUnknown:
			if d.full() {
				if s = d.dropCache(s, i); d.failed || d.stopped {
					return i, d.giveUp()
				}
			}
			r := rune(c)
			if c == '\n' {
				r = endOfLine
			}
			ns = d.step(s, r)
			trans = d.trans
			if ns >= 0 && trans[int(ns)+d.stride-2] != accelNone {
				trans[int(s)+int(class[c])] = ns | tagAccel
			} else {
				trans[int(s)+int(class[c])] = ns
			}
		case transSlow:
			// A rune beyond ASCII, or an invalid byte (U+FFFD, as
			// regexp decodes it).
			var r rune
			r, w = utf8.DecodeRune(buf[i:])
			rc := d.runeClass(r)
			key := uint64(uint32(s))<<32 | uint64(rc)
			var ok bool
			if ns, ok = d.runeTrans[key]; !ok {
				if d.full() {
					if s = d.dropCache(s, i); d.failed || d.stopped {
						return i, d.giveUp()
					}
					key = uint64(uint32(s))<<32 | uint64(rc)
				}
				ns = d.step(s, r)
				trans = d.trans
				d.runeTrans[key] = ns
			}
		}
		if ns == transMatch {
			d.scanned += i - d.mark
			return i, dfaMatch
		}
		if d.stopped {
			return i, d.giveUp()
		}
		s = ns
		// The state may skip ahead (a state that skips to the next byte
		// beyond ASCII stops at every one of them, so look again after
		// one).
		i = d.accelerate(s, buf, i+w, &cache)
		trans = d.trans
	}
	d.scanned += n - d.mark
	d.failures = 0
	// The last line, if buf does not end with '\n', ends here.
	if n > 0 && buf[n-1] != '\n' && d.endStep(s) == transMatch {
		return n - 1, dfaMatch
	}
	return 0, dfaNoMatch
}

// giveUp is what first returns when the DFA failed or was stopped.
func (d *dfa) giveUp() int {
	if d.stopped {
		d.failed = true // the next scan starts afresh
		return dfaStopped
	}
	return dfaFailed
}

// endStep is the transition at the end of a line not followed by '\n',
// cached in the row's last entry.
func (d *dfa) endStep(s int32) int32 {
	e := &d.trans[int(s)+d.stride-1]
	if *e == transUnknown {
		*e = d.step(s, endOfLine)
	}
	return *e
}

// denseRun is first's four-bytes-a-step loop for text where skipping
// ahead does not pay: an entry tagged tagAccel is followed as the plain
// entry it tags instead of stopping there. It returns where, and in which
// state, it stopped: at an entry that needs first's slower path, or with
// fewer than four bytes of buf left.
func (d *dfa) denseRun(buf []byte, i int, s int32) (int, int32) {
	trans, class := d.trans, &d.class
	for ; i+4 <= len(buf); i += 4 {
		b := buf[i : i+4 : i+4]
		n0 := trans[int(s)+int(class[b[0]])]
		if n0 < 0 {
			break
		}
		n0 &^= tagAccel
		n1 := trans[int(n0)+int(class[b[1]])]
		if n1 < 0 {
			return i + 1, n0
		}
		n1 &^= tagAccel
		n2 := trans[int(n1)+int(class[b[2]])]
		if n2 < 0 {
			return i + 2, n1
		}
		n2 &^= tagAccel
		n3 := trans[int(n2)+int(class[b[3]])]
		if n3 < 0 {
			return i + 3, n2
		}
		s = n3 &^ tagAccel
	}
	return i, s
}

// matchLine reports whether line (no '\n' in it) holds a match:
// dfaMatch, dfaNoMatch, or dfaFailed when the DFA gave up.
func (d *dfa) matchLine(line []byte) int {
	_, res := d.matchLineAt(line)
	return res
}

// matchLineAt is matchLine, with where the first match ends when it
// finds one (first's offset).
func (d *dfa) matchLineAt(line []byte) (int, int) {
	if len(line) == 0 {
		if d.failed {
			return 0, dfaFailed
		}
		if d.endStep(d.lineStart) == transMatch {
			return 0, dfaMatch
		}
		return 0, dfaNoMatch
	}
	return d.first(line)
}

// sparseSet is a set of instruction numbers with constant-time clear, in
// insertion order (dense). Marked members are in the set but not in dense.
type sparseSet struct {
	dense  []uint32
	sparse []uint32
	gen    []uint32
	cur    uint32
}

func newSparseSet(n int) sparseSet {
	return sparseSet{dense: make([]uint32, 0, n), gen: make([]uint32, n), cur: 1}
}

func (s *sparseSet) clear() {
	s.dense = s.dense[:0]
	s.cur++
}

func (s *sparseSet) has(pc uint32) bool { return s.gen[pc] == s.cur }

func (s *sparseSet) mark(pc uint32) { s.gen[pc] = s.cur }

func (s *sparseSet) add(pc uint32) {
	s.gen[pc] = s.cur
	s.dense = append(s.dense, pc)
}
