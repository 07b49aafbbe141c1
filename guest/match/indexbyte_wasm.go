package match

// indexByte is bytes.IndexByte, faster under wasm: see indexByteWords.
func indexByte(b []byte, c byte) int { return indexByteWords(b, c) }
