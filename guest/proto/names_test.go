package proto

import (
	"cmp"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPathName(t *testing.T) {
	for in, want := range map[string]string{
		`a\b.txt`: `a\b.txt`, `"bad\xffname.txt"`: "bad\xffname.txt", `"a\nb"`: "a\nb", `"\"x\""`: `"x"`,
		`"quoted".txt`: `"quoted".txt`, `"`: `"`, `""`: "", `"bad`: `"bad`, "plain": "plain", "`raw`": "`raw`",
	} {
		if got := PathName(in); got != want {
			t.Errorf("PathName(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestValidPath(t *testing.T) {
	for in, want := range map[string]bool{"a/b": true, "bad\xffname": true, "\xfe/x": true, ".": true,
		"": false, "a/../b": false, "/a": false, "a/": false, "a//b": false, "\xff/..": false} {
		if got := ValidPath(in); got != want {
			t.Errorf("ValidPath(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzValidPath: ValidPath is fs.ValidPath on the name made valid UTF-8
// (its definition before it was written as one pass).
func FuzzValidPath(f *testing.F) {
	for _, s := range []string{"a/b", "bad\xffname", ".", "", "a/../b", "/a", "a/", "a//b", "\xff/..", "./a", "a/.", "..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidPath(name), fs.ValidPath(strings.ToValidUTF8(name, "\uFFFD")); got != want {
			t.Fatalf("ValidPath(%q) = %v, fs.ValidPath of its valid form %v", name, got, want)
		}
	})
}

// FuzzWASIPath: the escape between the guest and the host's mount round
// trips every name, always yields UTF-8, leaves a UTF-8 name without DEL
// as it is, and decoding never makes a "/" or a NUL that was not there.
func FuzzWASIPath(f *testing.F) {
	for _, s := range []string{"a/b", "bad\xffname", "del\x7f", "\x7fff", "\x7f2f..\x7f00", "é\xc3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		w := WASIPath(name)
		if !utf8.ValidString(w) {
			t.Fatalf("WASIPath(%q) = %q is not UTF-8", name, w)
		}
		if back := FromWASIPath(w); back != name {
			t.Fatalf("FromWASIPath(WASIPath(%q)) = %q", name, back)
		}
		if utf8.ValidString(name) && !strings.ContainsRune(name, 0x7f) && w != name {
			t.Fatalf("WASIPath changed a plain name %q to %q", name, w)
		}
		d := FromWASIPath(name)
		if strings.Count(d, "/") > strings.Count(name, "/") || strings.Count(d, "\x00") > strings.Count(name, "\x00") {
			t.Fatalf("FromWASIPath(%q) = %q made a separator or a NUL", name, d)
		}
	})
}

// A Go quoted string of any name reads back as that name.
func FuzzPathNameQuoted(f *testing.F) {
	for _, s := range []string{"bad\xffname", "a\nb", `"x"`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got := PathName(strconv.Quote(name)); got != name {
			t.Fatalf("PathName(%s) = %q", strconv.Quote(name), got)
		}
	})
}

// FuzzNameKey: two names without NUL compare as their keys do whenever
// the keys differ, and names of 8 bytes or fewer with equal keys are
// equal.
func FuzzNameKey(f *testing.F) {
	for _, p := range [][2]string{{"a", "ab"}, {"ab", "a"}, {"f0.go", "f10.go"}, {"a-shared-prefix-1", "a-shared-prefix-2"}, {"\xff", "\x01"}, {"", "x"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.IndexByte(a, 0) >= 0 || strings.IndexByte(b, 0) >= 0 {
			t.Skip("a file name holds no NUL")
		}
		ka, kb := NameKey(a), NameKey(b)
		if ka != kb {
			if got, want := cmp.Compare(ka, kb), strings.Compare(a, b); got != want {
				t.Fatalf("keys of %q and %q compare %d, the names %d", a, b, got, want)
			}
		} else if len(a) <= 8 && len(b) <= 8 && a != b {
			t.Fatalf("%q and %q have one key", a, b)
		}
	})
}
