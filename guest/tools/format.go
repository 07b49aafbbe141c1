package tools

import (
	"strconv"
	"strings"
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
