package fakellm

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
	if !done || len(args) < 3 || strings.Join(args, "") != `{"path":"notes.txt"}` {
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
	if resp.StatusCode != 404 || e.Error != `model "nope" not found, try pulling it first` {
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
