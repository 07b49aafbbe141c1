package tools

import (
	"bytes"
	"unicode/utf8"
)

// sniffLen is how much of a file decides whether it is text. It matches
// what git and GNU grep look at, and keeps a 4 GiB sparse file from being
// read any further than its first block.
const sniffLen = 8 << 10

// isBinary reports whether the head of a file looks like binary data: a
// known binary signature, a NUL byte, or more invalid UTF-8 than a
// legacy-encoded text file would have. The tolerance lets a Latin-1 comment
// or a UTF-8 sequence cut by the sniff window through as text.
func isBinary(head []byte) bool {
	if binaryKind(head) != "binary data" || bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	invalid := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(head[i:]) {
				break // cut by the window, not invalid
			}
			invalid++
		}
		i += size
	}
	return invalid > 4+len(head)/64
}

// binaryKind names the format of a binary file from its first bytes: enough
// to tell the model what a refused file probably is, so that it does not
// retry it with other tools. The table is local so the package keeps no
// mutable state.
func binaryKind(head []byte) string {
	magic := [...]struct{ prefix, kind string }{
		{"\x89PNG\r\n\x1a\n", "PNG image"},
		{"\xff\xd8\xff", "JPEG image"},
		{"GIF87a", "GIF image"},
		{"GIF89a", "GIF image"},
		{"%PDF-", "PDF document"},
		{"PK\x03\x04", "ZIP archive"},
		{"PK\x05\x06", "ZIP archive"},
		{"\x1f\x8b", "gzip data"},
		{"\x7fELF", "ELF executable"},
		{"\x00asm", "WebAssembly module"},
		{"SQLite format 3\x00", "SQLite database"},
	}
	for _, m := range magic {
		if len(head) >= len(m.prefix) && string(head[:len(m.prefix)]) == m.prefix {
			return m.kind
		}
	}
	return "binary data"
}

// cutUTF8 returns b cut to at most n bytes without splitting a UTF-8
// sequence, so that cut text stays valid for the model.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	// Back off over an incomplete trailing sequence (at most 3 bytes).
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				b = b[:len(b)-i]
			}
			break
		}
	}
	return b
}
