// Package display makes untrusted text safe to show a person on a terminal.
//
// Everything moat prints that came from the model or from the files it reads
// (paths, proposed content, diffs, answers) passes through here first. A
// terminal interprets bytes: ESC starts CSI sequences that move the cursor
// and erase lines, OSC sequences that set the window title, make links
// (OSC 8) or write the clipboard (OSC 52), DCS strings, and bare CR returns
// to the start of a line so later text hides earlier text. Bidi overrides
// and isolates reorder what is displayed (Trojan Source, CVE-2021-42574),
// and zero-width characters hide text in plain sight. Any of these in a
// proposed change could make a reviewer approve something other than what
// they saw.
//
// The package does not remove such characters, it shows them: each one is
// replaced by a visible escape (`\x1b`, `\r`, `\u202e`, `\xff` for a byte
// that is not UTF-8), so what a person reads maps one-to-one to the bytes
// that will be written. Tabs and newlines are kept where layout matters
// ([Sanitize]) and escaped where a value must stay on one line ([Line]).
//
// # Limits
//
// A backslash in the input is printed as itself, because escaping every
// backslash would make ordinary source code unreadable. So the text `\r`
// and a CR byte look alike; callers that need the distinction use [Count]
// to tell the reader that escapes are present, or [Escaper.Mark] to
// highlight them (for example in reverse video).
package display

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escaper turns untrusted text into text that is safe to print. The zero
// value escapes everything, newlines and tabs included.
type Escaper struct {
	// Layout keeps '\n' and '\t' as they are.
	Layout bool
	// Mark, if set, wraps each escape, so a caller can highlight it. The
	// result of Mark is trusted: it is written as is.
	Mark func(escape string) string
}

// String returns s with every unsafe character replaced by a visible escape.
// The result is valid UTF-8 and contains no ESC, no other C0 or C1 control
// (except '\n' and '\t' when Layout is set), no DEL, and no bidi, zero-width
// or other invisible formatting character, unless Mark adds them.
func (e Escaper) String(s string) string {
	if e.clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			e.put(&b, fmt.Sprintf(`\x%02x`, s[i]))
		} else if esc, ok := e.escape(r); ok {
			e.put(&b, esc)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func (e Escaper) put(b *strings.Builder, esc string) {
	if e.Mark != nil {
		esc = e.Mark(esc)
	}
	b.WriteString(esc)
}

// clean reports whether s needs no escaping at all: the common case, checked
// without allocating.
func (e Escaper) clean(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		if _, ok := e.escape(r); ok {
			return false
		}
		i += n
	}
	return true
}

// escape returns the visible form of r when r must not reach a terminal.
func (e Escaper) escape(r rune) (string, bool) {
	switch {
	case r == '\n' || r == '\t':
		if e.Layout {
			return "", false
		}
		if r == '\n' {
			return `\n`, true
		}
		return `\t`, true
	case r == '\r':
		return `\r`, true
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), true
	case Unsafe(r):
		if r > 0xffff {
			return fmt.Sprintf(`\U%08x`, r), true
		}
		return fmt.Sprintf(`\u%04x`, r), true
	}
	return "", false
}

// Unsafe reports whether r is a character beyond ASCII that a terminal must
// not receive raw: a C1 control (U+0080-U+009F, which some terminals treat
// as CSI, OSC and DCS introducers), a format character (Unicode category Cf:
// bidi embeddings, overrides and isolates, zero-width space and joiners,
// word joiner, BOM, soft hyphen, tag characters), a line or paragraph
// separator, or one of the invisible fillers and selectors used to hide
// text (Hangul fillers, the combining grapheme joiner, variation
// selectors). ASCII controls are handled by [Escaper] itself.
func Unsafe(r rune) bool {
	switch {
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029: // LINE / PARAGRAPH SEPARATOR: newlines to some renderers
		return true
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0: // invisible joiner and Hangul fillers
		return true
	case 0xfe00 <= r && r <= 0xfe0f, 0xe0100 <= r && r <= 0xe01ef: // variation selectors
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Sanitize returns s safe to print, keeping its newlines and tabs: for
// multi-line text such as file content and diffs.
func Sanitize(s string) string { return Escaper{Layout: true}.String(s) }

// Line returns s safe to print on one line: newlines and tabs are escaped
// too. For paths, names and other single values.
func Line(s string) string { return Escaper{}.String(s) }

// Count returns how many characters [Sanitize] escapes in s (newlines and
// tabs are not counted).
func Count(s string) int {
	e := Escaper{Layout: true}
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n++
		} else if _, ok := e.escape(r); ok {
			n++
		}
		i += size
	}
	return n
}

// Color reports whether colour may be used on a terminal, by the usual
// conventions: not for a dumb or unknown terminal (TERM), nor when
// NO_COLOR is set to anything (no-color.org).
func Color(getenv func(string) string) bool {
	t := getenv("TERM")
	return t != "" && t != "dumb" && getenv("NO_COLOR") == ""
}
