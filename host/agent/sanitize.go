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

// space is what a reply is trimmed of at its start and end, as
// strings.TrimSpace would for ASCII.
const space = " \t\r\n"

// streamSanitizer writes one reply at a time as it streams in: escaped
// for a terminal, trimmed of leading and trailing blank space (as the
// answer used to be printed whole), optionally wrapped at word boundaries,
// and ended with exactly one newline by Flush.
//
// A multi-byte character may be split across two chunks, so an incomplete
// tail is held back until the next chunk completes it (or Flush gives up
// on it). Trailing blank space is held back too, until text follows it.
type streamSanitizer struct {
	w io.Writer
	// before, if set, is called once per reply just before its first byte
	// is written (the waiting indicator is cleared then).
	before func()
	wrap   wrapper // width 0: no wrapping

	pending []byte // an incomplete UTF-8 character
	space   string // blank space not yet known to be trailing
	started bool   // the reply's first non-blank text has been seen
	wrote   bool   // something of this reply was written
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
	text := string(buf[:cut])
	if !s.started {
		if text = strings.TrimLeft(text, space); text == "" {
			return
		}
		s.started = true
	}
	body := strings.TrimRight(text, space)
	if body == "" {
		s.space += text
		return
	}
	held := s.space
	s.space = text[len(body):]
	s.emit(held + body)
}

func (s *streamSanitizer) emit(t string) {
	if t == "" {
		return
	}
	if !s.wrote && s.before != nil {
		s.before()
	}
	s.wrote = true
	t = Sanitize(t, true)
	if s.wrap.width > 0 {
		s.wrap.write(s.w, t)
		return
	}
	io.WriteString(s.w, t)
}

// Flush ends the reply: it writes any held-back bytes (escaped: they never
// completed a rune), drops trailing blank space, and ends the line if the
// reply wrote anything. The next Write starts a new reply.
func (s *streamSanitizer) Flush() {
	if len(s.pending) > 0 {
		s.emit(s.space + string(s.pending))
	}
	if s.wrote {
		s.wrap.flush(s.w)
		io.WriteString(s.w, "\n")
	}
	s.wrap.col = 0
	s.pending, s.space, s.started, s.wrote = nil, "", false, false
}

// wrapper breaks escaped text into lines of at most width columns, at
// spaces where it can: a word is held back until it is complete (a space,
// a newline or the end of the reply follows it), then goes on the current
// line if it fits and on the next one if not. A word longer than a line is
// broken where the line ends. A column is a rune: wide characters and
// combining marks are not measured.
type wrapper struct {
	width int
	col   int    // columns written on the current line
	gap   string // blanks between the last word written and the next
	word  []rune // the word being received
}

func (w *wrapper) write(out io.Writer, t string) {
	var b strings.Builder
	for _, r := range t {
		switch r {
		case '\n':
			w.putWord(&b)
			b.WriteByte('\n')
			w.col, w.gap = 0, ""
		case ' ', '\t':
			w.putWord(&b)
			w.gap += string(r)
		default:
			w.word = append(w.word, r)
			if len(w.word) >= w.width {
				w.putWord(&b) // cannot fit any line: break it
			}
		}
	}
	io.WriteString(out, b.String())
}

func (w *wrapper) flush(out io.Writer) {
	var b strings.Builder
	w.putWord(&b)
	io.WriteString(out, b.String())
}

// putWord writes the gap and the held word, starting a new line first when
// they would not fit on this one.
func (w *wrapper) putWord(b *strings.Builder) {
	if len(w.word) == 0 {
		return
	}
	gap := columns(w.gap, w.col)
	if w.col > 0 && w.col+gap+len(w.word) > w.width {
		b.WriteByte('\n')
		w.col, w.gap, gap = 0, "", 0
	}
	b.WriteString(w.gap)
	w.col += gap
	for len(w.word) > 0 {
		n := min(len(w.word), w.width-w.col)
		if n <= 0 {
			b.WriteByte('\n')
			w.col = 0
			continue
		}
		b.WriteString(string(w.word[:n]))
		w.word = w.word[n:]
		w.col += n
	}
	w.gap, w.word = "", w.word[:0]
}

// columns measures blanks written from column col: a tab reaches the next
// multiple of 8.
func columns(blanks string, col int) int {
	n := 0
	for _, r := range blanks {
		if r == '\t' {
			n += 8 - (col+n)%8
		} else {
			n++
		}
	}
	return n
}
