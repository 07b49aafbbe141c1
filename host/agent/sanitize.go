package agent

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Sanitize makes text from the model or from files safe to print on a
// terminal: C0 and C1 control characters (ESC, \r, BEL...), DEL, Unicode
// bidirectional overrides and invalid UTF-8 are shown escaped (\x1b,
// \u202e, \xff) so they cannot move the cursor, rewrite a line, set the
// window title, reach the clipboard (OSC 52) or reorder what is shown.
// Newlines and tabs are kept when keepNewlines is true.
func Sanitize(s string, keepNewlines bool) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case (r == '\n' || r == '\t') && keepNewlines:
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0, isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// isBidi reports the Unicode controls that reorder displayed text
// ("Trojan Source", CVE-2021-42574).
func isBidi(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// streamSanitizer sanitises streamed text. A multi-byte character may be
// split across two chunks, so an incomplete tail is held back until the
// next chunk completes it (or Flush gives up on it).
type streamSanitizer struct {
	w       io.Writer
	pending []byte
	midLine bool // the last byte written was not a newline
}

func (s *streamSanitizer) Write(p string) {
	buf := append(s.pending, p...)
	cut := len(buf)
	// Hold back at most 3 trailing bytes that could start a longer rune.
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-3; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	s.pending = append([]byte(nil), buf[cut:]...)
	s.emit(string(buf[:cut]))
}

func (s *streamSanitizer) emit(t string) {
	if t == "" {
		return
	}
	io.WriteString(s.w, Sanitize(t, true))
	s.midLine = !strings.HasSuffix(t, "\n")
}

// Flush writes any held-back bytes (escaped: they never completed a rune)
// and ends the line if text was left mid-line.
func (s *streamSanitizer) Flush() {
	s.emit(string(s.pending))
	s.pending = nil
	if s.midLine {
		io.WriteString(s.w, "\n")
		s.midLine = false
	}
}
