package match

// indexByte is bytes.IndexByte, faster under wasm: see indexByteWords.
func indexByte(b []byte, c byte) int { return indexByteWords(b, c) }

// indexShort is bytes.Index for a pattern of two or three bytes, faster
// under wasm: see indexShortWords.
func indexShort(b, pat []byte) int { return indexShortWords(b, pat) }
