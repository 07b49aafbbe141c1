//go:build !wasm

package match

import "bytes"

// indexByte is bytes.IndexByte (see indexByteWords for wasm).
func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }
