package main

import (
	"encoding/json"
	"testing"
)

// visibleJSON escapes what a terminal would act on and keeps the value.
func TestVisibleJSON(t *testing.T) {
	in := "a\u202eb\u0085c\U000E0041d\u200be é 世"
	b, _ := json.Marshal(in)
	out := visibleJSON(b)
	want := `"a\u202eb\u0085c\udb40\udc41d\u200be é 世"`
	if string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	var back string
	if err := json.Unmarshal(out, &back); err != nil || back != in {
		t.Errorf("decoded %q (%v), want %q", back, err, in)
	}
	if plain := []byte(`{"a":"é"}`); string(visibleJSON(plain)) != string(plain) {
		t.Error("plain JSON changed")
	}
}
