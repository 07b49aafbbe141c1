package suggest

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"model", "model", 0},
		{"modle", "model", 2},
		{"read_text_file", "read_file", 5},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{strings.Repeat("x", 300), "x", 300},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}
