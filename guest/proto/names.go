package proto

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// PathName is the file name a path argument stands for.
//
// The tools show a name that could be mistaken for something else (a
// newline, another control character, invisible Unicode, a leading double
// quote) or that is not UTF-8 as a Go quoted string, quotes included:
// "a\nforged.txt", "bad\xffname.txt". The JSON wire is UTF-8 and cannot
// carry the byte 0xff, so a path argument that is exactly such a quoted
// string, passed back as shown, is unquoted here; every other argument is
// the name itself, byte for byte (a backslash in it is a plain character,
// as it is on Unix). So every name a tool shows reaches the same file
// when passed back to any tool. The one ambiguity: a file whose whole
// name is a valid quoted string ("x", quotes included) is reached by the
// quoted form the tools show for it ("\"x\""), not by its bare name.
//
// This is the one definition of the rule: the host's lexical check
// (host/policy Clean) and the guest's (guest/tools) both read every path
// argument through it.
func PathName(arg string) string {
	if len(arg) >= 2 && arg[0] == '"' && arg[len(arg)-1] == '"' {
		if s, err := strconv.Unquote(arg); err == nil {
			return s
		}
	}
	return arg
}

// ValidPath is fs.ValidPath without its demand for UTF-8: a slash-separated,
// unrooted path with no "", "." or ".." element. File names on Unix are
// bytes, and a name the tools show (quoted) must open too.
//
// It is fs.ValidPath's loop without the UTF-8 check, in one pass: the
// guest checks every path it opens, and making a valid copy first to hand
// fs.ValidPath showed in a grep's time under wasm.
func ValidPath(name string) bool {
	if name == "." {
		return true
	}
	for {
		i := strings.IndexByte(name, '/')
		elem := name
		if i >= 0 {
			elem = name[:i]
		}
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
		if i < 0 {
			return true
		}
		name = name[i+1:]
	}
}

// wasiEscape starts an escaped byte in a path between the guest and the
// host's mount (WASIPath); DEL is the rarest byte a valid name can hold.
const wasiEscape = 0x7f

// WASIPath is name as the guest hands it to a WASI path call. wazero
// refuses a path that is not UTF-8 before the host's mount sees it, so a
// name whose bytes are not UTF-8 could be listed (a listing carries bytes)
// but never opened. Here each byte that is not part of valid UTF-8, and
// DEL itself, travels as DEL and two hex digits; every other byte as it
// is, so a UTF-8 name without DEL (nearly every name) is unchanged.
// host/confine reads the path back with [FromWASIPath].
func WASIPath(name string) string {
	if utf8.ValidString(name) && strings.IndexByte(name, wasiEscape) < 0 {
		return name
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(name)+8)
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		if (r == utf8.RuneError && n == 1) || name[i] == wasiEscape {
			b = append(b, wasiEscape, hex[name[i]>>4], hex[name[i]&15])
			i++
			continue
		}
		b = append(b, name[i:i+n]...)
		i += n
	}
	return string(b)
}

// FromWASIPath undoes [WASIPath]. Only bytes WASIPath escapes (DEL and
// 0x80 to 0xff) are decoded, so no path can gain a "/" or a NUL this way;
// anything else after a DEL is left as it is.
func FromWASIPath(p string) string {
	if strings.IndexByte(p, wasiEscape) < 0 {
		return p
	}
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == wasiEscape && i+2 < len(p) {
			if v, err := strconv.ParseUint(p[i+1:i+3], 16, 8); err == nil && v >= wasiEscape {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, p[i])
	}
	return string(b)
}

// NameKey is name's first 8 bytes as a big-endian number, zero-padded.
// Names compare as their keys do unless the keys are equal, so a sort of
// listed names compares them by key first, and most comparisons end
// there: under wasm a string comparison is a call, a key's is one
// instruction. (A file name holds no NUL, so a shorter name's padding
// sorts before any byte of a longer one.)
func NameKey(name string) uint64 {
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(name) {
			k |= uint64(name[i])
		}
	}
	return k
}
