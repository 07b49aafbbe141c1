package display

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\n\tindented\n", "plain text\n\tindented\n"},
		{"héllo wörld ✓ 日本", "héllo wörld ✓ 日本"},
		{"a\rb", `a\rb`},
		{"crlf\r\n", "crlf\\r\n"},
		{"\x1b[2K\x1b[1Aerased", `\x1b[2K\x1b[1Aerased`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://evil/\x1b\link\x1b]8;;\x1b\`},
		{"\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\x07`},
		{"\x1bP+q\x1b\\", `\x1bP+q\x1b\`},
		{"\u009b2J", `\u009b2J`}, // C1 CSI
		{"\u009d0;t\u009c", `\u009d0;t\u009c`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"bad\xff\xfeutf8", `bad\xff\xfeutf8`},
		{"if admin \u202e } \u2066x\u2069", `if admin \u202e } \u2066x\u2069`},
		{"a\u202ab\u202bc\u202cd\u202de\u2067f\u2068g", `a\u202ab\u202bc\u202cd\u202de\u2067f\u2068g`},
		{"zero\u200bwidth\u200c\u200d\u2060\ufeff", `zero\u200bwidth\u200c\u200d\u2060\ufeff`},
		{"lrm\u200e\u200f", `lrm\u200e\u200f`},
		{"sep\u2028\u2029", `sep\u2028\u2029`},
		{"tag\U000e0041", `tag\U000e0041`},
		{"fill\u3164er", `fill\u3164er`},
	}
	for _, tc := range cases {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\nb\tc\x1b"), `a\nb\tc\x1b`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	if got := Line("src/main.go"); got != "src/main.go" {
		t.Errorf("Line changed a plain path: %q", got)
	}
}

func TestCountAndMark(t *testing.T) {
	s := "ok\n\x1b[31mred\u202e\xff"
	if n := Count(s); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
	if n := Count("tabs\tand\nnewlines"); n != 0 {
		t.Errorf("Count of layout = %d, want 0", n)
	}
	got := Escaper{Layout: true, Mark: func(e string) string { return "[" + e + "]" }}.String(s)
	if want := "ok\n[\\x1b][31mred[\\u202e][\\xff]"; got != want {
		t.Errorf("Mark: %q, want %q", got, want)
	}
}

// checkSafe is the property every output must have.
func checkSafe(t *testing.T, in, out string, layout bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output of %q is not UTF-8: %q", in, out)
	}
	for _, r := range out {
		bad := r == 0x1b || r == '\r' || r == 0x7f || (r < 0x20 && r != '\n' && r != '\t') || Unsafe(r)
		if !layout && (r == '\n' || r == '\t') {
			bad = true
		}
		if bad {
			t.Fatalf("output of %q carries %U: %q", in, r, out)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"", "plain\n", "\x1b[2J\x1b]0;x\x07", "\u009b31m", "\u202e\u2066\u200b\ufeff",
		"\r\n", "\xff\xfe", "\x1bP1$r\x1b\\", "日本\u200d語", "\U000e0001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		checkSafe(t, s, out, true)
		checkSafe(t, s, Line(s), false)
		// Text with nothing to escape is shown exactly as it is.
		if Count(s) == 0 && out != s {
			t.Fatalf("clean text changed: %q -> %q", s, out)
		}
		// Layout survives: as many newlines out as in.
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("newlines changed: %q -> %q", s, out)
		}
	})
}
