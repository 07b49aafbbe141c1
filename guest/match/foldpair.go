package match

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// A foldPair finds a folded literal by two adjacent runes of it that are
// ASCII in every form (a letter in either case, or a byte that has no
// other form), when that pair is rare in text ("lv" of kelvin): a word
// scan tests eight offsets at once for both bytes, and each occurrence of
// the pair is compared rune by rune forward and back from it. It beats
// the run search of foldLit, whose skips are at most the literal's length,
// where the pair is rare enough.
type foldPair struct {
	k        int    // the pair is runes k and k+1 of the literal
	c, c1    byte   // their bytes, lower case
	fold, f1 uint64 // 0x20 in every byte where the rune is a letter
}

// maxPairShare is the largest share of text, as the product of each
// rune's share (byteShare), a pair may be estimated to make up: each
// occurrence costs a call of the scan and a comparison.
const maxPairShare = 1.0 / 2048

// newFoldPair returns the rarest such pair of a literal (its forms as in
// foldLit), or nil when none is estimated under share.
func newFoldPair(forms [][][]byte, share float64) *foldPair {
	ascii := func(rf [][]byte) (byteClass, bool) {
		var c byteClass
		for _, form := range rf {
			if len(form) != 1 || form[0] >= utf8.RuneSelf {
				return c, false
			}
			c[form[0]] = true
		}
		return c, true
	}
	var best *foldPair
	bestShare := share
	for k := 0; k+1 < len(forms); k++ {
		a, ok := ascii(forms[k])
		b, ok1 := ascii(forms[k+1])
		if !ok || !ok1 {
			continue
		}
		if s := byteShare(&a) * byteShare(&b); s < bestShare {
			bestShare = s
			best = &foldPair{k: k, c: lower(forms[k][0][0]), c1: lower(forms[k+1][0][0])}
			if len(forms[k]) == 2 {
				best.fold = 0x2020202020202020
			}
			if len(forms[k+1]) == 2 {
				best.f1 = 0x2020202020202020
			}
		}
	}
	return best
}

// index returns the offset in b of the first occurrence of the pair, or
// -1: four words a loop step, the bytes of each and the bytes after them
// tested at once. A true occurrence always raises its flag in the words'
// zero-byte tests, and a false flag only comes above a true one of the
// same test, so the lowest flag is never past the first occurrence; a
// false one is passed over.
func (p *foldPair) index(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	pc, pc1 := uint64(p.c)*ones, uint64(p.c1)*ones
	lo, lo1 := byte(p.fold), byte(p.f1)
	for i := 0; i+1 < len(b); {
		if i+33 > len(b) {
			if b[i]|lo == p.c && b[i+1]|lo1 == p.c1 {
				return i
			}
			i++
			continue
		}
		w := b[i : i+33 : i+33]
		t0 := (binary.LittleEndian.Uint64(w[0:]) | p.fold) ^ pc
		u0 := (binary.LittleEndian.Uint64(w[1:]) | p.f1) ^ pc1
		t1 := (binary.LittleEndian.Uint64(w[8:]) | p.fold) ^ pc
		u1 := (binary.LittleEndian.Uint64(w[9:]) | p.f1) ^ pc1
		t2 := (binary.LittleEndian.Uint64(w[16:]) | p.fold) ^ pc
		u2 := (binary.LittleEndian.Uint64(w[17:]) | p.f1) ^ pc1
		t3 := (binary.LittleEndian.Uint64(w[24:]) | p.fold) ^ pc
		u3 := (binary.LittleEndian.Uint64(w[25:]) | p.f1) ^ pc1
		z0 := (t0 - ones) &^ t0 & (u0 - ones) &^ u0 & highs
		z1 := (t1 - ones) &^ t1 & (u1 - ones) &^ u1 & highs
		z2 := (t2 - ones) &^ t2 & (u2 - ones) &^ u2 & highs
		z3 := (t3 - ones) &^ t3 & (u3 - ones) &^ u3 & highs
		if z0|z1|z2|z3 == 0 {
			i += 32
			continue
		}
		var j int
		switch {
		case z0 != 0:
			j = i + bits.TrailingZeros64(z0)/8
		case z1 != 0:
			j = i + 8 + bits.TrailingZeros64(z1)/8
		case z2 != 0:
			j = i + 16 + bits.TrailingZeros64(z2)/8
		default:
			j = i + 24 + bits.TrailingZeros64(z3)/8
		}
		if b[j]|lo == p.c && b[j+1]|lo1 == p.c1 {
			return j
		}
		i = j + 1
	}
	return -1
}

// pairIndex is foldLit.index by the pair.
func (f *foldLit) pairIndex(b []byte) int {
	p := f.pair
	for from := 0; ; {
		i := p.index(b[from:])
		if i < 0 {
			return -1
		}
		i += from
		if f.fwd(b[i+2:], p.k+2) {
			if s := f.bwd(b[:i], p.k); s >= 0 {
				return s
			}
		}
		from = i + 1
	}
}

// fwd reports whether b starts with forms of the literal's runes from k
// to its end.
func (f *foldLit) fwd(b []byte, k int) bool {
	pos := 0
next:
	for _, forms := range f.forms[k:] {
		for _, form := range forms {
			if bytes.HasPrefix(b[pos:], form) {
				pos += len(form)
				continue next
			}
		}
		return false
	}
	return true
}

// bwd returns where forms of the literal's runes before k that end b
// start, or -1.
func (f *foldLit) bwd(b []byte, k int) int {
	pos := len(b)
next:
	for k--; k >= 0; k-- {
		for _, form := range f.forms[k] {
			if bytes.HasSuffix(b[:pos], form) {
				pos -= len(form)
				continue next
			}
		}
		return -1
	}
	return pos
}
