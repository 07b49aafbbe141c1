package main

import (
	"flag"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/peterbourgon/ff/v3/ffcli"
)

func TestParseArgsInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		root string
		max  int
		pos  []string
	}{
		{[]string{"what is here?", "--root", "sub"}, "sub", 5, []string{"what is here?"}},
		{[]string{"a", "-root=sub", "b", "--max=7"}, "sub", 7, []string{"a", "b"}},
		{[]string{"--", "--root", "sub"}, ".", 5, []string{"--root", "sub"}},
		{[]string{"-", "--max", "-1"}, ".", -1, []string{"-"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		root := fs.String("root", ".", "")
		max := fs.Int("max", 5, "")
		pos, err := parseArgs(&ffcli.Command{Name: "t", FlagSet: fs}, tc.args, keyOwners{})
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if *root != tc.root || *max != tc.max || strings.Join(pos, "|") != strings.Join(tc.pos, "|") {
			t.Errorf("%q: root %q max %d args %q; want %q %d %q", tc.args, *root, *max, pos, tc.root, tc.max, tc.pos)
		}
	}
}

func TestSetValueSaysWhatIsWanted(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Duration("d", time.Second, "")
	fs.Int64("n", 1, "")
	fs.Bool("b", false, "")
	for _, tc := range []struct{ name, value, want string }{
		{"d", "5", "invalid duration (want a unit, like 30s)"},
		{"d", "1.5", "invalid duration (want a unit, like 30s)"},
		{"d", "soon", "invalid duration (want a number and a unit, like 30s, 5m or 1h30m)"},
		{"n", "abc", "not a whole number"},
		{"n", "99999999999999999999", "number out of range"},
		{"b", "maybe", "want true or false"},
	} {
		err := setValue(fs, fs.Lookup(tc.name), tc.value)
		if err == nil || err.Error() != tc.want {
			t.Errorf("-%s %q: got %v, want %q", tc.name, tc.value, err, tc.want)
		}
	}
}

func TestWrapTextKeepsWordsAndWidth(t *testing.T) {
	text := "  - A tool result that starts with \"error:\" is feedback, not a failure: read it, fix the call → and go on.\nshort line\n" +
		strings.Repeat("word ", 30) + "https://example.com/a-very-long-address-that-cannot-be-broken-anywhere-at-all"
	for _, width := range []int{40, 57, 80} {
		got := wrapText(text, width)
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(text), " ") {
			t.Errorf("width %d: words changed:\n%s", width, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if n := utf8.RuneCountInString(l); n > width && strings.Contains(strings.TrimSpace(l), " ") {
				t.Errorf("width %d: line of %d columns: %q", width, n, l)
			}
		}
		if !strings.Contains(got, "\n    ") {
			t.Errorf("width %d: a list item's continuation should hang under its text:\n%s", width, got)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"model", "max-turns", "root"}
	if got := closest("modle", names); got != ` (did you mean "model"?)` {
		t.Errorf("modle: %q", got)
	}
	if got := closest("frobnicate", names); got != "" {
		t.Errorf("frobnicate: %q", got)
	}
}

// A repeatable flag takes a comma-separated list, so that one variable can
// hold several globs; commas of the glob syntax stay in their glob.
func TestStringListSplitsAtCommas(t *testing.T) {
	for in, want := range map[string]string{
		"*.md":              "*.md",
		"*.md,*.txt":        "*.md|*.txt",
		"*.md, *.txt ":      "*.md|*.txt",
		"*.{md,txt},secret": "*.{md,txt}|secret",
		"a[,]b,c":           "a[,]b|c",
		`a\,b,c`:            `a\,b|c`,
		"{a,{b,c}},d":       "{a,{b,c}}|d",
	} {
		var l stringList
		if err := l.Set(in); err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := strings.Join(l, "|"); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"a,", ",a", "a,,b", ""} {
		var l stringList
		if err := l.Set(bad); err == nil {
			t.Errorf("%q: accepted as %q", bad, l)
		}
	}
}
