//go:build !wasm

package match

import "bytes"

// indexByte is bytes.IndexByte (see indexByteWords for wasm).
func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }

// indexShort is bytes.Index for a pattern of two or three bytes (see
// indexShortWords for wasm).
func indexShort(b, pat []byte) int { return bytes.Index(b, pat) }
