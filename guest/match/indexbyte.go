package match

import (
	"bytes"
	"encoding/binary"
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
