package scripted

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// The wire is what the real servers send: native tool calls whole with an
// arguments object, OpenAI arguments a string in several pieces.
func TestWire(t *testing.T) {
	s, err := ParseScript([]byte(`{"turns":[
		{"text":"hello there","calls":[{"name":"read_file","args":{"path":"notes.txt"}}]},
		{"calls":[{"name":"read_file","args":{"path":"notes.txt"}}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := Start(s)
	defer srv.Close()

	resp := post(t, srv.URL+"/api/chat", `{"model":"qwen3","messages":[],"tools":[{}]}`)
	var lines []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not NDJSON: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	if len(lines) != 5 { // 3 text chunks, 1 call, done
		t.Fatalf("%d chunks: %v", len(lines), lines)
	}
	call := lines[3]["message"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if call["id"] != "call_1_0" || fn["index"] != 0.0 || fn["arguments"].(map[string]any)["path"] != "notes.txt" {
		t.Errorf("native tool call = %v", call)
	}
	if last := lines[4]; last["done"] != true || last["done_reason"] != "stop" {
		t.Errorf("final chunk = %v", last)
	}

	resp = post(t, srv.URL+"/v1/chat/completions", `{"model":"qwen3","messages":[],"tools":[{}],"stream":true}`)
	var args []string
	done := false
	sc = bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Function struct{ Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatal(err)
		}
		for _, tc := range ch.Choices[0].Delta.ToolCalls {
			if tc.Function.Arguments != "" {
				args = append(args, tc.Function.Arguments)
			}
		}
	}
	// Ollama sends the call whole, arguments and all, in one delta.
	if !done || len(args) != 1 || args[0] != `{"path":"notes.txt"}` {
		t.Errorf("done=%v, argument pieces %q", done, args)
	}

	if n := len(srv.ChatRequests()); n != 2 {
		t.Errorf("recorded %d chat requests", n)
	}
}

func TestModelErrors(t *testing.T) {
	srv := Start(Script{Models: []Model{{Name: "gemma:2b"}}})
	defer srv.Close()
	resp := post(t, srv.URL+"/api/chat", `{"model":"gemma:2b","messages":[],"tools":[{}]}`)
	var e struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 400 || e.Error != "registry.ollama.ai/library/gemma:2b does not support tools" {
		t.Errorf("no tools: %d %q", resp.StatusCode, e.Error)
	}
	resp = post(t, srv.URL+"/api/chat", `{"model":"nope","messages":[]}`)
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 404 || e.Error != `model 'nope' not found` {
		t.Errorf("not found: %d %q", resp.StatusCode, e.Error)
	}
	if _, err := ParseScript([]byte(`{"turns":[{"txt":"typo"}]}`)); err == nil {
		t.Error("unknown field accepted")
	}
}

// delay_ms holds back the whole response, headers included, as a server
// loading the model does.
func TestDelay(t *testing.T) {
	s, err := ParseScript([]byte(`{"turns":[{"text":"hi","delay_ms":200},{"text":"hi","delay_ms":200}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := Start(s)
	defer srv.Close()
	for _, path := range []string{"/api/chat", "/v1/chat/completions"} {
		start := time.Now()
		resp := post(t, srv.URL+path, `{"model":"qwen3","messages":[],"stream":true}`)
		if waited := time.Since(start); waited < 200*time.Millisecond {
			t.Errorf("%s: headers after %v, before the delay", path, waited)
		}
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), `"hi"`) {
			t.Errorf("%s: reply %q", path, b)
		}
	}
}

// sse reads a server-sent event stream: the data of each event, [DONE]
// included.
func sse(t *testing.T, resp *http.Response) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

// Thinking and figures as Ollama and llama.cpp put them on the wire.
func TestWireThinkingAndFigures(t *testing.T) {
	turn := `{"thinking":"let me see","text":"hello there","prompt_tokens":30,"eval_count":7}`
	s, err := ParseScript([]byte(`{"models":[{"name":"qwen3","tools":true,"thinking":true}],"turns":[` + turn + `,` + turn + `,` + turn + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := Start(s)
	defer srv.Close()

	// Native: message.thinking chunks before the content, in chunks of
	// their own, the figures on done.
	resp := post(t, srv.URL+"/api/chat", `{"model":"qwen3","messages":[]}`)
	var kinds []string
	var last map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		json.Unmarshal(sc.Bytes(), &m)
		msg := m["message"].(map[string]any)
		k := ""
		if msg["thinking"] != nil {
			k += "T"
		}
		if msg["content"] != "" {
			k += "C"
		}
		kinds = append(kinds, k)
		last = m
	}
	if got := strings.Join(kinds, " "); got != "T T T C C C " {
		t.Errorf("native chunks %q, want thinking, then content, and a final chunk", got)
	}
	for k, want := range map[string]float64{"prompt_eval_count": 30, "eval_count": 7, "eval_duration": 7 * evalNS} {
		if last[k] != want {
			t.Errorf("final chunk %s = %v, want %v", k, last[k], want)
		}
	}

	// Ollama's OpenAI layer: reasoning deltas, the finish event with
	// role and empty content, then usage in an event with no choices, then
	// [DONE].
	ev := sse(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"qwen3","messages":[],"stream":true,"stream_options":{"include_usage":true}}`))
	if !strings.Contains(ev[0], `"reasoning":"let "`) || !strings.Contains(ev[0], `"content":""`) {
		t.Errorf("first event %s", ev[0])
	}
	n := len(ev)
	if ev[n-1] != "[DONE]" || !strings.Contains(ev[n-3], `"delta":{"role":"assistant","content":""},"finish_reason":"stop"`) ||
		!strings.Contains(ev[n-2], `"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":7,"total_tokens":37}`) {
		t.Errorf("last events %q", ev[n-3:])
	}

	// llama.cpp: reasoning_content; its timings in a last event with no
	// choices; without include_usage, no usage.
	srv.script.OpenAI = "llamacpp"
	ev = sse(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"qwen3","messages":[],"stream":true}`))
	n = len(ev)
	if !strings.Contains(ev[0], `"reasoning_content":"let "`) || strings.Contains(ev[n-2], `"usage"`) ||
		!strings.Contains(ev[n-2], `"choices":[],"timings":{"prompt_n":30,`) || !strings.Contains(ev[n-2], `"predicted_n":7,"predicted_ms":140,`) {
		t.Errorf("llama.cpp events %q", ev)
	}
}

// The think field is checked as Ollama 0.17 checks it.
func TestThinkChecks(t *testing.T) {
	srv := Start(Script{Models: []Model{{Name: "llama3.1", Tools: true}, {Name: "qwen3", Tools: true, Thinking: true}, {Name: "gpt-oss", Tools: true, Thinking: true, Family: "gptoss"}},
		Turns: []Turn{{Text: "a"}, {Text: "b"}}})
	defer srv.Close()
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{`{"model":"llama3.1","think":true}`, 400, `"llama3.1" does not support thinking`},
		{`{"model":"qwen3","think":"high"}`, 400, `think value "high" is not supported for this model`},
		{`{"model":"qwen3","think":"max"}`, 400, `invalid think value: "max"`},
		{`{"model":"llama3.1","think":false}`, 200, ""},
		{`{"model":"gpt-oss","think":"low"}`, 200, ""},
	} {
		resp := post(t, srv.URL+"/api/chat", c.body)
		var e struct{ Error string }
		b, _ := io.ReadAll(resp.Body)
		json.Unmarshal(b, &e)
		if resp.StatusCode != c.code || !strings.HasPrefix(e.Error, c.msg) {
			t.Errorf("%s: %d %s, want %d %q", c.body, resp.StatusCode, b, c.code, c.msg)
		}
	}
}

// Calls written as text, in each family's format, and no tool calls.
func TestTextCalls(t *testing.T) {
	calls := []Call{{Name: "read_file", Args: json.RawMessage(`{"path":"a"}`)}, {Name: "grep", Args: json.RawMessage(`{"pattern":"x"}`)}}
	want := map[string]string{
		"hermes":  "<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n</tool_call>\n<tool_call>\n{\"name\":\"grep\",\"arguments\":{\"pattern\":\"x\"}}\n</tool_call>",
		"mistral": `[TOOL_CALLS][{"name":"read_file","arguments":{"path":"a"}}, {"name":"grep","arguments":{"pattern":"x"}}]`,
		"llama":   `<|python_tag|>{"name":"read_file","parameters":{"path":"a"}}; {"name":"grep","parameters":{"pattern":"x"}}`,
		"json":    `{"name":"read_file","arguments":{"path":"a"}}`,
	}
	for f, w := range want {
		if got := textCalls(f, calls); got != w {
			t.Errorf("%s:\n got %s\nwant %s", f, got, w)
		}
	}
}

// The shapes Ollama 0.17's own server sends (cmd/moat TestConformanceWire
// compares them with it): "length" as done_reason and finish_reason, but
// "tool_calls" over OpenAI when the reply has a call; a failure mid-stream
// over OpenAI as one empty chunk and the end of the stream, no [DONE].
func TestOllamaShapes(t *testing.T) {
	s, err := ParseScript([]byte(`{"turns":[
		{"text":"cut sho","done_reason":"length"},
		{"text":"cut sho","done_reason":"length"},
		{"calls":[{"name":"read_file","args":{"path":"a"}}],"done_reason":"length"},
		{"text":"a long reply","fail":"error"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := Start(s)
	defer srv.Close()
	resp := post(t, srv.URL+"/api/chat", `{"model":"qwen3","messages":[]}`)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"done":true,"done_reason":"length"`) {
		t.Errorf("native: %s", b)
	}
	ev := sse(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"qwen3","messages":[],"stream":true}`))
	if !strings.Contains(ev[len(ev)-2], `"finish_reason":"length"`) {
		t.Errorf("openai: %q", ev)
	}
	ev = sse(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"qwen3","messages":[],"tools":[{}],"stream":true}`))
	if !strings.Contains(ev[len(ev)-2], `"finish_reason":"tool_calls"`) {
		t.Errorf("openai with a call: %q", ev)
	}
	ev = sse(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"qwen3","messages":[],"stream":true}`))
	if n := len(ev); n != 2 || !strings.Contains(ev[1], `"model":"","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`) {
		t.Errorf("openai failure: %q", ev)
	}
	if _, err := ParseScript([]byte(`{"turns":[{"done_reason":"cut"}]}`)); err == nil {
		t.Error("an unknown done_reason was taken")
	}
}
