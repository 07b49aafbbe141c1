package match

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// indexByteWords is bytes.IndexByte, 32 bytes a loop step: indexByte
// under wasm, where bytes.IndexByte is a loop of hand-written wasm over
// four bytes a step, and this loop in Go over four words a step, testing
// all four for c at once, runs about twice as fast in wazero (a loop's
// back edge, through Go's dispatch of blocks, costs more than the
// arithmetic). Natively bytes.IndexByte, with vector instructions, is
// faster still, and indexByte is that.
func indexByteWords(b []byte, c byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	p := uint64(c) * ones
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		t0 := binary.LittleEndian.Uint64(w[0:]) ^ p
		t1 := binary.LittleEndian.Uint64(w[8:]) ^ p
		t2 := binary.LittleEndian.Uint64(w[16:]) ^ p
		t3 := binary.LittleEndian.Uint64(w[24:]) ^ p
		// A byte of t is zero where b holds c (the words' zero-byte test).
		if ((t0-ones)&^t0|(t1-ones)&^t1|(t2-ones)&^t2|(t3-ones)&^t3)&highs != 0 {
			break
		}
	}
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return -1
}

// indexShortWords is bytes.Index for a pattern of two or three bytes
// (indexShort under wasm). There bytes.Index scans for the pattern's first
// byte with bytes.IndexByte and, when that byte is common ('e' of "err",
// '0' of "0x"), soon falls back to Rabin-Karp, a loop over every byte.
// This word test of 32 places a loop step looks for the pattern's first
// two bytes at once (x|y has a zero byte exactly where both words match
// their byte; the lowest byte the zero-byte test flags is always a true
// zero, since its borrows run only upwards): with it the whole matcher
// is 2-7x faster in wazero on such literals (BenchmarkNext: `0x...`,
// `\bctx\b`, `err`).
func indexShortWords(b, pat []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	p0, p1 := uint64(pat[0])*ones, uint64(pat[1])*ones
	for i := 0; i+len(pat) <= len(b); {
		for ; i+33 <= len(b); i += 32 {
			w := b[i : i+33 : i+33]
			x := (binary.LittleEndian.Uint64(w[0:]) ^ p0) | (binary.LittleEndian.Uint64(w[1:]) ^ p1)
			y := (binary.LittleEndian.Uint64(w[8:]) ^ p0) | (binary.LittleEndian.Uint64(w[9:]) ^ p1)
			z := (binary.LittleEndian.Uint64(w[16:]) ^ p0) | (binary.LittleEndian.Uint64(w[17:]) ^ p1)
			v := (binary.LittleEndian.Uint64(w[24:]) ^ p0) | (binary.LittleEndian.Uint64(w[25:]) ^ p1)
			if ((x-ones)&^x|(y-ones)&^y|(z-ones)&^z|(v-ones)&^v)&highs == 0 {
				continue
			}
			if mx := (x - ones) &^ x & highs; mx != 0 {
				i += bits.TrailingZeros64(mx) >> 3
			} else if my := (y - ones) &^ y & highs; my != 0 {
				i += 8 + bits.TrailingZeros64(my)>>3
			} else if mz := (z - ones) &^ z & highs; mz != 0 {
				i += 16 + bits.TrailingZeros64(mz)>>3
			} else {
				i += 24 + bits.TrailingZeros64((v-ones)&^v&highs)>>3
			}
			break
		}
		if i+33 > len(b) { // the tail, a byte at a time
			for ; i+len(pat) <= len(b); i++ {
				if b[i] == pat[0] && b[i+1] == pat[1] {
					break
				}
			}
			if i+len(pat) > len(b) {
				return -1
			}
		}
		// b[i:i+2] is the pattern's first two bytes.
		if i+len(pat) <= len(b) && bytes.Equal(b[i+2:i+len(pat)], pat[2:]) {
			return i
		}
		i++
	}
	return -1
}

// IndexByte is bytes.IndexByte, faster under wasm (indexByteWords): for
// the guest's other scans of whole files, for a NUL byte or a newline.
func IndexByte(b []byte, c byte) int { return indexByte(b, c) }
