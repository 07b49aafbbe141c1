package proto

// The guest's side of encoding: its answers, written as encoding/json
// writes them (held to it by TestAppendResponse, TestAppendGrepShard and
// FuzzWire), and the rule it applies to invalid UTF-8.

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendResponse appends r as one JSON object (no newline), as encoding/json
// with SetEscapeHTML(false) writes it (r.Shard must be compact JSON, as
// AppendGrepShard and AppendGlobShard write it).
func AppendResponse(dst []byte, r *Response) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendUint(dst, r.ID, 10)
	dst = append(dst, `,"text":`...)
	dst = appendString(dst, r.Text)
	if r.IsError {
		dst = append(dst, `,"is_error":true`...)
	}
	if len(r.Shard) > 0 {
		dst = append(dst, `,"shard":`...) // compact JSON, as AppendGrepShard writes it
		dst = append(dst, r.Shard...)
	}
	return append(dst, '}')
}

// AppendGrepShard appends r as one JSON object, as encoding/json with
// SetEscapeHTML(false) writes it: the Text of a grep_shard answer.
func AppendGrepShard(dst []byte, r *GrepShardResult) []byte {
	dst = append(dst, `{"parts":`...)
	if r.Parts == nil {
		dst = append(dst, `null`...)
	} else {
		dst = append(dst, '[')
		for i, p := range r.Parts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"path":`...)
			dst = appendString(dst, p.Path)
			dst = append(dst, `,"text":`...)
			dst = appendString(dst, p.Text)
			dst = append(dst, `,"hits":`...)
			dst = strconv.AppendInt(dst, int64(p.Hits), 10)
			if len(p.Cuts) > 0 {
				dst = append(dst, `,"cuts":[`...)
				for j, c := range p.Cuts {
					if j > 0 {
						dst = append(dst, ',')
					}
					dst = strconv.AppendInt(dst, int64(c), 10)
				}
				dst = append(dst, ']')
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if r.More {
		dst = append(dst, `,"more":true`...)
	}
	if r.StopAt != "" {
		dst = append(dst, `,"stop_at":`...)
		dst = appendString(dst, r.StopAt)
	}
	if len(r.Weights) > 0 {
		dst = append(dst, `,"weights":[`...)
		for i, w := range r.Weights {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"path":`...)
			dst = appendString(dst, w.Path)
			dst = append(dst, `,"bytes":`...)
			dst = strconv.AppendInt(dst, w.Bytes, 10)
			if w.Entries != 0 {
				dst = append(dst, `,"entries":`...)
				dst = strconv.AppendInt(dst, int64(w.Entries), 10)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return appendNotes(dst, r.Notes, r.MoreNotes, r.TimeUp)
}

// AppendGlobShard appends r as one JSON object, as encoding/json with
// SetEscapeHTML(false) writes it: the Text of a glob_shard answer.
func AppendGlobShard(dst []byte, r *GlobShardResult) []byte {
	dst = append(dst, `{"matches":`...)
	if r.Matches == nil {
		dst = append(dst, `null`...)
	} else {
		dst = append(dst, '[')
		for i, m := range r.Matches {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, m)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(r.Total), 10)
	return appendNotes(dst, r.Notes, r.MoreNotes, r.TimeUp)
}

// appendNotes appends a shard answer's notes members and closes its object.
func appendNotes(dst []byte, notes []GrepNote, more int, timeUp string) []byte {
	if len(notes) > 0 {
		dst = append(dst, `,"notes":[`...)
		for i, n := range notes {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"at":`...)
			dst = appendString(dst, n.At)
			dst = append(dst, `,"text":`...)
			dst = appendString(dst, n.Text)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if more != 0 {
		dst = append(dst, `,"more_notes":`...)
		dst = strconv.AppendInt(dst, int64(more), 10)
	}
	if timeUp != "" {
		dst = append(dst, `,"time_up":`...)
		dst = appendString(dst, timeUp)
	}
	return append(dst, '}')
}

// appendString appends s as a JSON string the way encoding/json does:
// invalid UTF-8 becomes U+FFFD, control characters and U+2028/U+2029 are
// escaped, and <, > and & are left alone (SetEscapeHTML(false)).
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = plainRun(s, i)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainRun returns the end of the run of bytes from s[i] that appendString
// copies as they are (ASCII from ' ', but '"' and '\\'), looking at eight
// at a time: a grep answer is mostly such bytes, and a loop of one byte a
// turn was a third of the guest's time writing one.
func plainRun(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		_ = b[7]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		// A byte's high bit in t is set where it may be under ' ', '"' or
		// '\\' (exact when no byte has its own high bit set), or at or
		// past 0x80.
		q, bs := x^(ones*'"'), x^(ones*'\\')
		t := (x - ones*0x20) | (q - ones) | (bs - ones) | x
		if t&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// validUTF8 replaces each byte of s that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does (strings.ToValidUTF8 replaces whole runs).
func validUTF8(s string) string {
	s, _ = ValidUTF8(s, nil)
	return s
}

// ValidUTF8 is text as the JSON encoding of an answer carries it, each
// byte of invalid UTF-8 replaced with U+FFFD as encoding/json does, with
// the byte offsets in cuts moved along: offsets into the text a guest
// wrote, made offsets into the text the host decodes.
func ValidUTF8(text string, cuts []int) (string, []int) {
	if utf8.ValidString(text) {
		return text, cuts
	}
	var b strings.Builder
	b.Grow(len(text) + 8)
	moved := make([]int, len(cuts))
	k := 0
	for i := 0; i < len(text); {
		for k < len(cuts) && cuts[k] == i {
			moved[k] = b.Len()
			k++
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(text[i : i+n])
		}
		i += n
	}
	for ; k < len(cuts); k++ {
		moved[k] = b.Len()
	}
	return b.String(), moved
}
