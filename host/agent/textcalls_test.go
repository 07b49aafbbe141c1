package agent

import (
	"context"
	"strings"
	"testing"
)

func known(name string) bool { return name == "read_file" || name == "grep" }

func TestRecoverCalls(t *testing.T) {
	cases := []struct {
		name, in string
		format   TextCallFormat
		want     []string // "name args"; nil: not a call
	}{
		{"hermes", "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>", TextCallHermes, []string{`read_file {"path":"a"}`}},
		{"hermes two", "<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}</tool_call>\n<tool_call>{\"name\":\"grep\",\"arguments\":{\"pattern\":\"x\"}}</tool_call>", TextCallHermes,
			[]string{`read_file {"path":"a"}`, `grep {"pattern":"x"}`}},
		{"hermes unclosed", "<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}", TextCallHermes, []string{`read_file {"path":"a"}`}},
		{"mistral v3", `[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}, {"name": "grep", "arguments": {"pattern": "x"}}]`, TextCallMistral,
			[]string{`read_file {"path":"a"}`, `grep {"pattern":"x"}`}},
		{"mistral v11", `[TOOL_CALLS]read_file[ARGS]{"path": "a"}`, TextCallMistral, []string{`read_file {"path":"a"}`}},
		{"mistral v11 two", `[TOOL_CALLS]read_file[ARGS]{"path": "a"}[TOOL_CALLS]grep[CALL_ID]x1y2z3a4b[ARGS]{"pattern": "x"}`, TextCallMistral,
			[]string{`read_file {"path":"a"}`, `grep {"pattern":"x"}`}},
		{"mistral v11, bad arguments", `[TOOL_CALLS]read_file[ARGS]{"path": `, "", nil},
		{"mistral v11 without [ARGS]", `[TOOL_CALLS]read_file{"path": "a"}`, TextCallMistral, []string{`read_file {"path":"a"}`}},
		{"mistral, no arguments at all", `[TOOL_CALLS]read_file`, "", nil},
		{"llama", `<|python_tag|>{"name": "read_file", "parameters": {"path": "a"}}<|eom_id|>`, TextCallLlama, []string{`read_file {"path":"a"}`}},
		{"llama two", `<|python_tag|>{"name": "read_file", "parameters": {"path": "a"}}; {"name": "grep", "parameters": {"pattern": "x"}}`, TextCallLlama,
			[]string{`read_file {"path":"a"}`, `grep {"pattern":"x"}`}},
		{"bare", `  {"name": "read_file", "arguments": {"path": "a"}}  `, TextCallJSON, []string{`read_file {"path":"a"}`}},
		{"bare parameters", `{"name": "read_file", "parameters": {"path": "a"}}`, TextCallJSON, []string{`read_file {"path":"a"}`}},
		{"arguments as a string", `{"name": "read_file", "arguments": "{\"path\": \"a\"}"}`, TextCallJSON, []string{`read_file {"path":"a"}`}},
		{"fenced", "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```", TextCallJSON, []string{`read_file {"path":"a"}`}},
		{"no arguments", `{"name": "read_file"}`, TextCallJSON, []string{`read_file {}`}},

		{"unknown tool", `<tool_call>{"name":"run_shell","arguments":{"cmd":"ls"}}</tool_call>`, "", nil},
		{"one of two unknown", `[TOOL_CALLS][{"name":"read_file","arguments":{}},{"name":"rm","arguments":{}}]`, "", nil},
		{"prose before", `Sure: <tool_call>{"name":"read_file","arguments":{}}</tool_call>`, "", nil},
		{"prose after", `<tool_call>{"name":"read_file","arguments":{}}</tool_call> and then I will answer`, "", nil},
		{"json without name", `{"answer": 42}`, "", nil},
		{"json, more after", `{"name":"read_file","arguments":{}} {"x":1}`, "", nil},
		{"arguments not an object", `{"name":"read_file","arguments":[1]}`, "", nil},
		{"llama, junk after", `<|python_tag|>{"name":"read_file","parameters":{}} oops`, "", nil},
		{"plain answer", "The notes say: buy milk.", "", nil},
		{"empty", "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls, f := recoverCalls(c.in, known)
			var got []string
			for _, cl := range calls {
				got = append(got, cl.Name+" "+cl.Arguments)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") || f != c.format {
				t.Errorf("recoverCalls(%q) = %q, %q; want %q, %q", c.in, got, f, c.want, c.format)
			}
		})
	}
}

// The filter must give the same result however the text is chunked: a
// tag split over two chunks is still a tag.
func TestContentFilter(t *testing.T) {
	cases := []struct {
		name, in                       string
		streamed, think, content, held string
	}{
		{"plain", "Hello there.", "Hello there.", "", "Hello there.", ""},
		{"think block", "<think>\nhm\n</think>\n\nHello.", "Hello.", "\nhm\n", "Hello.", ""},
		{"think unclosed", "<think>still thinking", "", "still thinking", "", ""},
		{"call held", `<tool_call>{"name":"x"}</tool_call>`, "", "", `<tool_call>{"name":"x"}</tool_call>`, `<tool_call>{"name":"x"}</tool_call>`},
		{"think then call", "<think>a</think><|python_tag|>{}", "", "a", "<|python_tag|>{}", "<|python_tag|>{}"},
		{"json held", `{"a":1}`, "", "", `{"a":1}`, `{"a":1}`},
		{"less-than is text", "<b> is bold", "<b> is bold", "", "<b> is bold", ""},
		{"short", "<", "", "", "<", "<"},
		{"a second think is text", "<think>a</think>x<think>b</think>", "x<think>b</think>", "a", "x<think>b</think>", ""},
	}
	for _, c := range cases {
		for _, size := range []int{1, 2, 3, 5, 1000} {
			var streamed, think strings.Builder
			f := contentFilter{onThinking: func(s string) { think.WriteString(s) }, onText: func(s string) { streamed.WriteString(s) }}
			for i := 0; i < len(c.in); i += size {
				f.write(c.in[i:min(i+size, len(c.in))])
			}
			content, tagged, held := f.finish()
			if streamed.String() != c.streamed || think.String() != c.think || tagged != c.think || content != c.content || held != c.held {
				t.Errorf("%s, chunks of %d: streamed %q think %q/%q content %q held %q; want %q %q %q %q",
					c.name, size, streamed.String(), think.String(), tagged, content, held, c.streamed, c.think, c.content, c.held)
			}
		}
	}
}

func TestSendable(t *testing.T) {
	h := []Message{
		{Role: "system"},
		{Role: "user", Content: "q1"},
		{Role: "assistant", Thinking: "t1", ToolCalls: []ToolCall{{Name: "x"}}},
		{Role: "tool"},
		{Role: "assistant", Thinking: "t2", Content: "a1"},
		{Role: "user", Content: "q2"},
		{Role: "assistant", Thinking: "t3", ToolCalls: []ToolCall{{Name: "x"}}},
		{Role: "tool"},
	}
	out := sendable(h)
	var kept []string
	for _, m := range out {
		if m.Thinking != "" {
			kept = append(kept, m.Thinking)
		}
	}
	if strings.Join(kept, ",") != "t3" {
		t.Errorf("thinking sent: %q, want only t3 (the current question's tool-call turn)", kept)
	}
	if h[2].Thinking != "t1" {
		t.Error("sendable changed the history")
	}
}

func TestStatsSum(t *testing.T) {
	var total Stats
	total.add(Stats{Replies: 1, PromptTokens: 100, OutputTokens: 50, FirstTokenMS: 300, DurationMS: 1300, genMS: 1000, genTokens: 50})
	total.add(Stats{Replies: 1, PromptTokens: 200, OutputTokens: 10, FirstTokenMS: 100, DurationMS: 600, genMS: 500, genTokens: 10})
	total.add(Stats{Replies: 1, PromptTokens: 0, OutputTokens: 0, FirstTokenMS: 50, DurationMS: 50}) // no figures reported
	want := Stats{Replies: 3, PromptTokens: 300, OutputTokens: 60, TokensPerSecond: 40, FirstTokenMS: 300, DurationMS: 1950, genMS: 1500, genTokens: 60}
	if total != want {
		t.Errorf("sum %+v, want %+v", total, want)
	}
}

// Events: every kind a question produces, in order, over both APIs.
func TestEventsInOrder(t *testing.T) {
	js := `{"models":[{"name":"qwen3","tools":true,"thinking":true}],"turns":[
		{"thinking":"Hm.","calls":[{"name":"read_file","args":{"path":"notes.txt"}}]},
		{"text":"Milk."}]}`
	for _, w := range []wire{native, compat} {
		var kinds []string
		cfg := Config{Observer: ObserverFunc(func(e Event) {
			if n := len(kinds); n == 0 || kinds[n-1] != string(e.Type) {
				kinds = append(kinds, string(e.Type))
			}
		})}
		r := ask(t, w, js, cfg, map[string]string{"notes.txt": "buy milk\n"})
		if r.err != nil {
			t.Fatal(r.err)
		}
		got := strings.Join(kinds, " ")
		if want := "question thinking tool_call turn tool_result text turn end"; got != want {
			t.Errorf("%s: events %q, want %q", w, got, want)
		}
	}
}

// A reply that breaks off ends the question with reason error and no turn
// event for it.
func TestEventsOnFailure(t *testing.T) {
	var last Event
	var turns int
	cfg := Config{Observer: ObserverFunc(func(e Event) {
		last = e
		if e.Type == EventTurn {
			turns++
		}
	})}
	r := ask(t, native, `{"turns":[{"text":"Hello there","fail":"drop"}]}`, cfg, nil)
	if r.err == nil || last.Type != EventEnd || last.Reason != EndError || last.Error == "" || turns != 0 {
		t.Errorf("err %v, last event %+v, %d turn events", r.err, last, turns)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := New(Config{Backend: r.sess.cfg.Backend, Tools: r.tools, Model: "qwen3", Observer: cfg.Observer})
	s.Ask(ctx, "q")
	if last.Reason != EndInterrupted {
		t.Errorf("cancelled: reason %q, want interrupted", last.Reason)
	}
}

// A closing </think> without its opening tag ends thinking the template
// opened: the content and thinking are split when the reply ends.
func TestContentFilterCloseOnly(t *testing.T) {
	var streamed strings.Builder
	f := contentFilter{onThinking: func(string) {}, onText: func(s string) { streamed.WriteString(s) }}
	f.write("I should look.\n</think>\n\nThe answer.")
	content, thinking, held := f.finish()
	if content != "The answer." || thinking != "I should look.\n" || held != "" {
		t.Errorf("content %q thinking %q held %q", content, thinking, held)
	}
}

// FuzzContentFilter: whatever the model writes and however it is chunked,
// the filter gives the same content, thinking and held text, and a
// recovered call names only known tools.
func FuzzContentFilter(f *testing.F) {
	for _, s := range []string{"Hello.", "<think>a</think>b", "<tool_call>{\"name\":\"read_file\"}</tool_call>",
		"[TOOL_CALLS]read_file{}", "<|python_tag|>{\"name\":\"grep\",\"parameters\":{}}", "{\"name\":\"x\"}", "<thi", "```json\n{}\n```", "a</think>b"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, size uint8) {
		run := func(n int) (string, string, string, string) {
			var streamed strings.Builder
			cf := contentFilter{onThinking: func(string) {}, onText: func(s string) { streamed.WriteString(s) }}
			for i := 0; i < len(in); i += n {
				cf.write(in[i:min(i+n, len(in))])
			}
			c, th, h := cf.finish()
			return c, th, h, streamed.String()
		}
		c1, t1, h1, s1 := run(len(in) + 1)
		c2, t2, h2, s2 := run(int(size%16) + 1)
		if c1 != c2 || t1 != t2 || h1 != h2 || s1 != s2 {
			t.Errorf("chunking changed the result: %q %q %q %q vs %q %q %q %q", c1, t1, h1, s1, c2, t2, h2, s2)
		}
		calls, _ := recoverCalls(h1, known)
		for _, c := range calls {
			if !known(c.Name) {
				t.Errorf("recovered a call of unknown %q", c.Name)
			}
		}
	})
}
