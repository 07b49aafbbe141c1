package tools

import (
	"encoding/binary"
	"math/bits"
)

// countNewlines is bytes.Count(b, "\n") eight bytes at a time. Under wasm
// bytes.Count is a byte loop; grep counts the newlines of every block of a
// file larger than its buffer, and that loop was a fifth of a grep's time
// in the guest over Go's source tree. This is 5x faster there.
func countNewlines(b []byte) int {
	const (
		low7 = 0x7f7f7f7f7f7f7f7f
		nls  = 0x0a0a0a0a0a0a0a0a
	)
	n, i := 0, 0
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
