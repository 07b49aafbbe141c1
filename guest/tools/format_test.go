package tools

import (
	"errors"
	"fmt"
	"testing"
)

// TestSprintf holds sprintf to fmt.Sprintf for every verb and argument the
// guest uses, and to fmt's markers for the ones it does not support.
func TestSprintf(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
	}{
		{"plain", nil},
		{"%s and %v", []any{"a", "b"}},
		{"%d/%d of %s", []any{3, int64(-40), "f.txt"}},
		{"err: %v; %s", []any{errors.New("boom"), errors.New("bang")}},
		{"100%% sure, %d%%", []any{7}},
		{"trailing %", nil},
		{"%v", []any{12}},
	} {
		if got, want := sprintf(c.format, c.args...), fmt.Sprintf(c.format, c.args...); got != want {
			t.Errorf("sprintf(%q) = %q, want %q", c.format, got, want)
		}
	}
	for format, want := range map[string]string{"%s": "%!s(MISSING)", "%q": "%!q(MISSING)"} {
		if got := sprintf(format); got != want {
			t.Errorf("sprintf(%q) = %q, want %q", format, got, want)
		}
	}
	if got := sprintf("%d", "x"); got != "%!d(BADTYPE)" {
		t.Errorf("sprintf(%%d, string) = %q", got)
	}
}
