package tools

import (
	"encoding/binary"
	"math/bits"
)

// countNewlines is bytes.Count(b, "\n") a word at a time. Under wasm
// bytes.Count is a byte loop; grep counts the newlines of every block of a
// file larger than its buffer, and that loop was a fifth of a grep's time
// in the guest over Go's source tree. A loop of one word a step was 5x
// faster there; four words a step are 2.5x faster again (wazero, 1 MB
// of 40-byte lines).
func countNewlines(b []byte) int {
	const (
		low7 = 0x7f7f7f7f7f7f7f7f
		nls  = 0x0a0a0a0a0a0a0a0a
	)
	n, i := 0, 0
	for ; i+32 <= len(b); i += 32 {
		// Four words a loop step: under wasm a loop's back edge costs
		// more than the arithmetic.
		w := b[i : i+32 : i+32]
		x0 := binary.LittleEndian.Uint64(w[0:]) ^ nls
		x1 := binary.LittleEndian.Uint64(w[8:]) ^ nls
		x2 := binary.LittleEndian.Uint64(w[16:]) ^ nls
		x3 := binary.LittleEndian.Uint64(w[24:]) ^ nls
		t0 := ((x0 & low7) + low7) | x0
		t1 := ((x1 & low7) + low7) | x1
		t2 := ((x2 & low7) + low7) | x2
		t3 := ((x3 & low7) + low7) | x3
		n += 32 - bits.OnesCount64(t0&^low7) - bits.OnesCount64(t1&^low7) - bits.OnesCount64(t2&^low7) - bits.OnesCount64(t3&^low7)
	}
	for ; i+8 <= len(b); i += 8 {
		// A byte of x is zero where b has a newline; t's high bit of a byte
		// is set where x's byte is not zero (no carry crosses bytes).
		x := binary.LittleEndian.Uint64(b[i:]) ^ nls
		t := ((x & low7) + low7) | x
		n += 8 - bits.OnesCount64(t&^low7)
	}
	for ; i < len(b); i++ {
		if b[i] == '\n' {
			n++
		}
	}
	return n
}
