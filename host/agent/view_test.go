package agent

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The live line says "thinking" once thinking arrives, counting from then.
func TestSpinnerThinking(t *testing.T) {
	var out syncBuffer
	sp := NewSpinner(&out, "waiting for qwen3")
	sp.delay, sp.tick = 0, time.Millisecond
	sp.Start()
	waitFor(t, "the waiting line", func() bool { return strings.Contains(out.String(), "waiting for qwen3… 0s") })
	sp.Thinking()
	waitFor(t, "the thinking line", func() bool { return strings.Contains(out.String(), "thinking… 0s") })
	sp.Stop()
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("line not erased: %q", out.String())
	}
}

// thinkWaiting records the calls a ThinkingWaiting gets.
type thinkWaiting struct{ calls []string }

func (r *thinkWaiting) Start()    { r.calls = append(r.calls, "start") }
func (r *thinkWaiting) Stop()     { r.calls = append(r.calls, "stop") }
func (r *thinkWaiting) Thinking() { r.calls = append(r.calls, "thinking") }

// By default the thinking is not shown: the waiting line is told, and one
// activity line says how long it took. With Thinking set it is written
// there in full, apart from the answer, and the waiting line stops first.
func TestThinkingShown(t *testing.T) {
	js := `{"models":[{"name":"qwen3","tools":true,"thinking":true}],"turns":[{"thinking":"Let me think.","text":"Answer."}]}`
	for _, w := range []wire{native, compat} {
		rw := &thinkWaiting{}
		r := ask(t, w, js, Config{Waiting: rw}, nil)
		if r.err != nil || r.stream != "Answer.\n" || !strings.HasPrefix(r.activity, "· thought for ") {
			t.Errorf("%s: err %v stream %q activity %q", w, r.err, r.stream, r.activity)
		}
		if got := strings.Join(rw.calls, " "); !strings.HasPrefix(got, "start thinking stop") {
			t.Errorf("%s: waiting calls %q", w, got)
		}
		hist := r.sess.History()
		if last := hist[len(hist)-1]; last.Thinking != "Let me think." || last.Content != "Answer." {
			t.Errorf("%s: history has %+v", w, last)
		}

		var think bytes.Buffer
		rw = &thinkWaiting{}
		r = ask(t, w, js, Config{Waiting: rw, Thinking: &think}, nil)
		if think.String() != "Let me think.\n" || r.stream != "Answer.\n" || strings.Contains(r.activity, "thought") {
			t.Errorf("%s: thinking %q stream %q activity %q", w, think.String(), r.stream, r.activity)
		}
		if got := strings.Join(rw.calls, " "); strings.Contains(got, "thinking") || !strings.HasPrefix(got, "start stop") {
			t.Errorf("%s: waiting calls %q", w, got)
		}
	}
}

// A server that sends the thinking under both names (reasoning and
// reasoning_content) is not shown it twice.
func TestReasoningUnderBothNames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning":"Hm.","reasoning_content":"Hm."},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"content":"Yes."},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	var deltas []Delta
	reply, _, err := NewOpenAI(u, nil).Chat(context.Background(), Request{Model: "m"}, func(d Delta) { deltas = append(deltas, d) })
	if err != nil || reply.Thinking != "Hm." || reply.Content != "Yes." || deltas[0].Thinking != "Hm." {
		t.Errorf("reply %+v, deltas %+v, err %v", reply, deltas, err)
	}
}

// A server's 400 about thinking names --think only when --think was sent:
// a server other than Ollama (its own words) is explained the same way,
// and a 400 on a request without --think is not blamed on it.
func TestOpenAIThinkRefusal(t *testing.T) {
	msg := `{"error":{"message":"reasoning_effort is not supported by this model","type":"invalid_request_error"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, msg)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	o := NewOpenAI(u, nil)
	for think, want := range map[string]string{
		"low": o.String() + " refused --think low: reasoning_effort is not supported by this model; leave --think out, or give another value",
		"":    o.String() + " answered HTTP 400: reasoning_effort is not supported by this model",
	} {
		_, _, err := o.Chat(context.Background(), Request{Model: "m", Think: think}, func(Delta) {})
		if err == nil || err.Error() != want {
			t.Errorf("--think %q: %v, want %q", think, err, want)
		}
	}
}
