package match

// Acceleration: a DFA state that loops on itself for every byte but a few
// lets the scan skip to the next of those bytes with bytes.IndexByte (the
// one byte search with a fast loop under wasm), or to the next non-ASCII
// byte eight at a time.

import (
	"bytes"
	"encoding/binary"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// An accelSet is the few bytes that take a state elsewhere: between them
// the state loops on itself, so IndexByte can skip there.
type accelSet struct {
	n        int
	b        [maxAccelEscapes]byte
	nonASCII bool // every byte beyond ASCII escapes too
}

// accelerate returns where the state at off, entered before buf[i], next
// needs looking at: i, or the next of its escape bytes when it has few, or
// len(buf) when none follows.
func (d *dfa) accelerate(off int32, buf []byte, i int, cache *accelCache) int {
	a := d.trans[int(off)+d.stride-2]
	if a == accelNone {
		return i
	}
	if a == accelUnknown {
		if a = d.computeAccel(off); a < 0 {
			return i
		}
	}
	if cache.denseAt(i) {
		return i
	}
	j := cache.next(buf, i, &d.accel[a])
	if j < 0 {
		j = len(buf)
	}
	cache.judge(i, j)
	return j
}

// Acceleration is judged within each scan: when accelJudge skips in a row
// averaged under accelMinSkip bytes (JSON, whose '"' a state of `"id":`
// waits for comes every few bytes), the byte search costs more than it
// skips, and the scan steps byte by byte, acceleration off, for the next
// denseBytes; then it is judged again.
const (
	accelJudge   = 64
	accelMinSkip = 16
	denseBytes   = 64 << 10
)

// judge counts a skip from i to j and, after accelJudge of them, turns
// acceleration off up to denseBytes past j when they were short.
func (c *accelCache) judge(i, j int) {
	c.skipped += j - i
	if c.skips++; c.skips < accelJudge {
		return
	}
	if c.skipped < accelJudge*accelMinSkip {
		c.denseEnd = j + denseBytes
	}
	c.skips, c.skipped = 0, 0
}

// denseAt reports whether acceleration is off at offset i.
func (c *accelCache) denseAt(i int) bool { return i < c.denseEnd }

// computeAccel fills the acceleration entry of the state at off, finding
// its escape bytes. It computes the state's whole row, so it does nothing
// when the cache has no room left for that.
func (d *dfa) computeAccel(off int32) int32 {
	if len(d.states)+d.stride >= d.maxStates {
		d.trans[int(off)+d.stride-2] = accelNone
		return accelNone
	}
	var a accelSet
	for c := 0; c < utf8.RuneSelf; c++ {
		k := int(d.class[c])
		ns := d.trans[int(off)+k]
		if ns == transUnknown {
			r := rune(c)
			if c == '\n' {
				r = endOfLine
			}
			ns = d.step(off, r)
			d.trans[int(off)+k] = ns
		}
		if ns >= 0 {
			ns &^= tagAccel
		}
		if ns != off {
			if a.n == maxAccelEscapes {
				d.trans[int(off)+d.stride-2] = accelNone
				return accelNone
			}
			a.b[a.n] = byte(c)
			a.n++
		}
	}
	a.nonASCII = !d.selfLoopsBeyondASCII(off)
	d.accel = append(d.accel, a)
	i := int32(len(d.accel) - 1)
	d.trans[int(off)+d.stride-2] = i
	return i
}

// selfLoopsBeyondASCII reports whether every rune beyond ASCII (and every
// invalid byte) takes the state at off back to itself: no thread of it can
// consume such a rune, and what remains is the same state.
func (d *dfa) selfLoopsBeyondASCII(off int32) bool {
	st := &d.states[int(off)/d.stride]
	s := &d.set1
	s.clear()
	for _, pc := range st.pcs {
		// Following every assertion gives a superset of the threads.
		d.addThread(s, pc, ^syntax.EmptyOp(0), true)
	}
	for _, pc := range s.dense {
		if matchesBeyondASCII(&d.prog.Inst[pc]) {
			return false
		}
	}
	return d.step(off, utf8.RuneError) == off
}

// matchesBeyondASCII reports whether a rune instruction can match a rune
// of U+0080 or above.
func matchesBeyondASCII(in *syntax.Inst) bool {
	switch in.Op {
	case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	case syntax.InstRune1:
		return in.Rune[0] >= utf8.RuneSelf
	case syntax.InstRune:
		if len(in.Rune) == 1 {
			r := in.Rune[0]
			if r >= utf8.RuneSelf {
				return true
			}
			if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					if f >= utf8.RuneSelf {
						return true
					}
				}
			}
			return false
		}
		for i := 1; i < len(in.Rune); i += 2 {
			if in.Rune[i] >= utf8.RuneSelf {
				return true
			}
		}
	}
	return false
}

// accelCache remembers, within one scan, where each escape byte next
// occurs, so that a state with several escape bytes does not rescan. It is
// small so that a scan of one short line does not pay to set it up.
type accelCache struct {
	// skips and skipped count the skips since the last judgement and
	// their bytes; before denseEnd acceleration is off (judge).
	skips, skipped int
	denseEnd       int
	n              int
	entry          [8]struct {
		b       byte
		at, pos int32 // pos: first occurrence at or after at, or -1
	}
}

// next returns the first offset at or after from holding one of a's bytes,
// or -1.
func (c *accelCache) next(buf []byte, from int, a *accelSet) int {
	best := -1
	for k := 0; k < a.n; k++ {
		b := a.b[k]
		e := -1
		for x := 0; x < c.n && x < len(c.entry); x++ {
			if c.entry[x].b == b {
				e = x
				break
			}
		}
		if e < 0 {
			e = c.n % len(c.entry)
			c.n++
			c.entry[e].b = b
			c.entry[e].at = int32(len(buf) + 1) // forces a search
		}
		en := &c.entry[e]
		if int(en.at) > from || (en.pos >= 0 && int(en.pos) < from) {
			j := bytes.IndexByte(buf[from:], b)
			if j >= 0 {
				j += from
			}
			en.pos, en.at = int32(j), int32(from)
		}
		if p := int(en.pos); p >= 0 && (best < 0 || p < best) {
			best = p
		}
	}
	if a.nonASCII {
		lim := len(buf)
		if best >= 0 {
			lim = best
		}
		if j := indexNonASCII(buf[from:lim]); j >= 0 {
			best = from + j
		}
	}
	return best
}

// indexNonASCII returns the offset of the first byte of b beyond ASCII, or
// -1, looking at eight bytes at a time.
func indexNonASCII(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}
