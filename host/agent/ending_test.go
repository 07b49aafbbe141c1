package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A reply the server cut off at a length limit is never an answer, in
// either API, wherever the cut fell (the conformance suite shows the same
// against Ollama's own server).
func TestCutOffIsNotAnAnswer(t *testing.T) {
	models := `"models":[{"name":"qwen3","tools":true,"thinking":true}]`
	cases := []struct {
		name, turns string
		want        string
	}{
		{"in the text", `[{"text":"The notes say: bu","done_reason":"length"}]`, "not the whole answer"},
		{"in a call", `[{"calls":[{"name":"read_file","args":{"path":"notes.txt"}}],"done_reason":"length"}]`, "tool calls were not run"},
		{"in the thinking", `[{"thinking":"I should read","done_reason":"length"}]`, "still thinking"},
		{"nothing arrived", `[{"done_reason":"length"}]`, "nothing of it arrived"},
	}
	for _, c := range cases {
		for _, w := range []wire{native, compat} {
			t.Run(c.name+" "+string(w), func(t *testing.T) {
				r := ask(t, w, `{`+models+`,"turns":`+c.turns+`}`, Config{NumCtx: 4096}, map[string]string{"notes.txt": "buy milk"})
				if w == compat && c.name == "in a call" {
					// Ollama's OpenAI layer says tool_calls, not length,
					// for a reply with a call: the cut cannot be seen, and
					// the call runs.
					if errors.Is(r.err, ErrCutOff) || len(r.tools.calls) != 1 {
						t.Fatalf("err = %v, calls %q", r.err, r.tools.calls)
					}
					return
				}
				if !errors.Is(r.err, ErrCutOff) {
					t.Fatalf("err = %v, answer %q; want ErrCutOff", r.err, r.answer)
				}
				for _, s := range []string{c.want, "--num-ctx, now 4096", "length limit"} {
					if !strings.Contains(r.err.Error(), s) {
						t.Errorf("message %q lacks %q", r.err, s)
					}
				}
				if len(r.tools.calls) != 0 {
					t.Errorf("calls of a cut-off reply ran: %q", r.tools.calls)
				}
				if h := r.sess.History(); len(h) != 1 {
					t.Errorf("history keeps %d messages after a cut-off question", len(h))
				}
			})
		}
	}
}

// An empty reply is told to the model once; a second one ends the
// question with ErrEmptyReply, never as an empty answer.
func TestEmptyReply(t *testing.T) {
	models := `"models":[{"name":"qwen3","tools":true,"thinking":true}]`
	for _, w := range []wire{native, compat} {
		t.Run("twice "+string(w), func(t *testing.T) {
			r := ask(t, w, `{`+models+`,"turns":[{"thinking":"hmm"},{}]}`, Config{}, nil)
			if !errors.Is(r.err, ErrEmptyReply) {
				t.Fatalf("err = %v, answer %q; want ErrEmptyReply", r.err, r.answer)
			}
			if !strings.Contains(r.err.Error(), "empty again") || !strings.Contains(r.err.Error(), "nothing arrived") {
				t.Errorf("message %q", r.err)
			}
			if !strings.Contains(r.activity, "moat: the model's reply was empty (it only thought") {
				t.Errorf("activity %q does not say the first reply was empty", r.activity)
			}
			bodies := chatBodies(t, r.srv)
			if len(bodies) != 2 {
				t.Fatalf("%d requests, want 2 (one retry)", len(bodies))
			}
			msgs := messages(bodies[1])
			if last := msgs[len(msgs)-1]; last["role"] != "user" || last["content"] != EmptyReplyNote {
				t.Errorf("the retry's last message is %v, want the note", last)
			}
		})
		t.Run("then an answer "+string(w), func(t *testing.T) {
			r := ask(t, w, `{`+models+`,"turns":[{},{"text":"The notes say: buy milk."}]}`, Config{}, nil)
			if r.err != nil || r.answer != "The notes say: buy milk." {
				t.Fatalf("err = %v, answer %q", r.err, r.answer)
			}
			if !strings.Contains(r.activity, "nothing arrived") {
				t.Errorf("activity %q", r.activity)
			}
		})
	}
}

// --think false on a model that thinks anyway is said once a session
// (the fake's gpt-oss, as Ollama's, thinks whatever think says).
func TestThinkFalseIgnoredIsSaid(t *testing.T) {
	r := ask(t, native, `{"models":[{"name":"gpt-oss","tools":true,"thinking":true,"family":"gptoss"}],"turns":[
		{"thinking":"look first","calls":[{"name":"read_file","args":{"path":"notes.txt"}}]},
		{"thinking":"now answer","text":"buy milk"}]}`, Config{Model: "gpt-oss", Think: "false"}, map[string]string{"notes.txt": "buy milk"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := strings.Count(r.activity, "--think false: model gpt-oss thought anyway"); n != 1 {
		t.Errorf("said %d times, want once: %q", n, r.activity)
	}
}

// llama.cpp and vLLM split a call's arguments over several deltas; the
// backend puts them together (Ollama sends each call whole).
func TestSplitArguments(t *testing.T) {
	r := ask(t, compat, `{"openai":"llamacpp","turns":[
		{"calls":[{"name":"read_file","args":{"path":"notes.txt"}},{"name":"read_file","args":{"path":"other.txt"}}]},
		{"text":"buy milk"}]}`, Config{}, map[string]string{"notes.txt": "buy milk", "other.txt": "x"})
	if r.err != nil || r.answer != "buy milk" {
		t.Fatalf("err = %v, answer %q", r.err, r.answer)
	}
	if got := strings.Join(r.tools.calls, "|"); got != `read_file {"path":"notes.txt"}|read_file {"path":"other.txt"}` {
		t.Errorf("calls %q", got)
	}
	if n := len(r.srv.ChatRequests()); n != 2 {
		t.Errorf("%d requests", n)
	}
}

// Over its OpenAI-compatible API Ollama is asked about the window through
// its own API; a server that is not Ollama cannot tell.
func TestOpenAIContextWindow(t *testing.T) {
	srv := script(t, `{"models":[{"name":"qwen3:latest","tools":true,"context_length":40960,"num_ctx":16384}],"turns":[]}`)
	w, ok := backend(t, compat, srv.URL).(*OpenAI).ContextWindow(context.Background(), "qwen3")
	if !ok || !w.OpenAI || w.Trained != 40960 || w.Param != 16384 {
		t.Errorf("window %+v, %v", w, ok)
	}
	closed := script(t, `{"turns":[]}`)
	closed.Close()
	if _, ok := backend(t, compat, closed.URL).(*OpenAI).ContextWindow(context.Background(), "qwen3"); ok {
		t.Error("a server that does not answer told a window")
	}
}
