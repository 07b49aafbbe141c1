package agent

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/moatdev/moat/host/display"
)

// Sanitize makes text from the model, a server or a file safe to print on
// a terminal, through host/display: control characters, ESC sequences,
// bidi and invisible formatting characters and invalid UTF-8 are shown as
// visible escapes (\x1b, \r, \u202e, \xff). Newlines and tabs are kept
// when keepNewlines is true, escaped otherwise (one value, one line).
func Sanitize(s string, keepNewlines bool) string {
	if keepNewlines {
		return display.Sanitize(s)
	}
	return display.Line(s)
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
