package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/moatdev/moat/host/agent"
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

// Results are matched to their calls by order where the server sent no
// ids (older Ollama versions, some OpenAI-compatible servers): every call
// that ran has its result, none reads as "did not run".
func TestJSONResultsWithoutIDs(t *testing.T) {
	r := newScriptOutput("qwen3", nil)
	args := json.RawMessage(`{"path":"a"}`)
	for _, e := range []agent.Event{
		{Type: agent.EventToolCall, Turn: 1, Name: "read_file", Arguments: args},
		{Type: agent.EventToolCall, Turn: 1, Name: "read_file", Arguments: args},
		{Type: agent.EventToolCall, Turn: 1, ID: "x", Name: "list_dir", Arguments: args},
		{Type: agent.EventToolResult, Turn: 1, Name: "read_file", Text: "one", Bytes: 3},
		{Type: agent.EventToolResult, Turn: 1, Name: "read_file", Text: "two!", Bytes: 4},
		{Type: agent.EventToolResult, Turn: 1, ID: "x", Name: "list_dir", Text: "three", Bytes: 5},
		{Type: agent.EventToolCall, Turn: 2, Name: "read_file", Arguments: args},
	} {
		r.Event(e)
	}
	var got []string
	for _, c := range r.res.ToolCalls {
		res := "null"
		if c.Result != nil {
			res = *c.Result
		}
		got = append(got, fmt.Sprintf("%d %s %d", c.Turn, res, c.Bytes))
	}
	want := []string{"1 one 3", "1 two! 4", "1 three 5", "2 null 0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", got, want)
	}
}
