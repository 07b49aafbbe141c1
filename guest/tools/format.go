package tools

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// sprintf formats the guest's messages: %s and %v take a string, an error
// or an int, %d an int or int64, %% is a percent sign. It stands in for
// fmt.Sprintf, which (with the reflection it needs) was a tenth of the
// guest's code, and wazero validates every byte of that code each time a
// process loads the guest. A verb it does not know, or a missing argument,
// shows as fmt would show it ("%!d(BADTYPE)" where fmt names the type).
func sprintf(format string, args ...any) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(format, '%')
		if i < 0 {
			b.WriteString(format)
			return b.String()
		}
		if i == len(format)-1 {
			b.WriteString(format[:i] + "%!(NOVERB)")
			return b.String()
		}
		b.WriteString(format[:i])
		verb := format[i+1]
		format = format[i+2:]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if len(args) == 0 {
			b.WriteString("%!" + string(verb) + "(MISSING)")
			continue
		}
		arg := args[0]
		args = args[1:]
		switch v := arg.(type) {
		case string:
			if verb == 's' || verb == 'v' {
				b.WriteString(v)
				continue
			}
		case error:
			if verb == 's' || verb == 'v' {
				b.WriteString(v.Error())
				continue
			}
		case int:
			if verb == 'd' || verb == 'v' {
				b.WriteString(strconv.Itoa(v))
				continue
			}
		case int64:
			if verb == 'd' || verb == 'v' {
				b.WriteString(strconv.FormatInt(v, 10))
				continue
			}
		}
		b.WriteString("%!" + string(verb) + "(BADTYPE)")
	}
}

// fmtTo writes sprintf's result to w.
func fmtTo(w interface{ WriteString(string) (int, error) }, format string, args ...any) {
	w.WriteString(sprintf(format, args...))
}

// quotePath is how every tool prints a file name or path: as it is, unless
// it could be mistaken for something else in the output. A name with a
// newline, another control character, invisible or line-separating Unicode
// (anything strconv.IsPrint rejects, such as U+2028 or a bidi override),
// invalid UTF-8, or a leading double quote is printed as a Go quoted string,
// which for valid UTF-8 reads as a JSON string does ("a\nforged.txt" with
// its quotes); invalid bytes show as \xNN. So one file can never forge a
// second listing entry or grep hit, and the model addresses such a file by
// passing the decoded name as the path (a JSON argument carries "\n" as
// well as any other character). Names that need no quoting are printed
// byte for byte, so ordinary output does not change.
func quotePath(p string) string {
	if !needsQuote(p) {
		return p
	}
	return strconv.Quote(p)
}

// needsQuote reports whether quotePath must quote p.
func needsQuote(p string) bool {
	if strings.HasPrefix(p, `"`) {
		return true
	}
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(p[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			return true
		}
		i += n
	}
	return false
}
