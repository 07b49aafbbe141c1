package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/scripted"
	"github.com/moatdev/moat/host/toolspec"
)

// fakeTools validates calls exactly as the engine does (through the
// catalogue) and serves file contents from a map instead of the guest.
type fakeTools struct {
	cat   *toolspec.Catalog
	files map[string]string
	calls []string // "name canonical-args" of every valid call, in order
}

func newFakeTools(t *testing.T, files map[string]string) *fakeTools {
	cat, err := toolspec.New()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeTools{cat: cat, files: files}
}

func (d *fakeTools) Tools() []*toolspec.Tool { return d.cat.Tools(false) }

func (d *fakeTools) Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	_, canon, err := d.cat.Validate(name, args)
	if err != nil {
		return toolspec.Errorf("%v", err)
	}
	d.calls = append(d.calls, name+" "+string(canon))
	var a struct{ Path string }
	json.Unmarshal(canon, &a)
	if c, ok := d.files[a.Path]; ok {
		return toolspec.Result{Text: c}
	}
	return toolspec.Errorf("%s: no such file or folder", a.Path)
}

type wire string

const (
	native wire = "ollama"
	compat wire = "openai"
)

func backend(t *testing.T, which wire, srvURL string) Backend {
	u, err := url.Parse(srvURL)
	if err != nil {
		t.Fatal(err)
	}
	if which == compat {
		return NewOpenAI(u, nil)
	}
	return NewOllama(u, nil)
}

func script(t *testing.T, js string) *scripted.Server {
	t.Helper()
	s, err := scripted.ParseScript([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.Start(s)
	t.Cleanup(srv.Close)
	return srv
}

type run struct {
	answer   string
	err      error
	activity string
	stream   string
	tools    *fakeTools
	srv      *scripted.Server
	sess     *Session
}

func ask(t *testing.T, which wire, js string, cfg Config, files map[string]string) run {
	t.Helper()
	srv := script(t, js)
	tools := newFakeTools(t, files)
	var act, stream bytes.Buffer
	cfg.Backend = backend(t, which, srv.URL)
	cfg.Tools = tools
	if cfg.Model == "" {
		cfg.Model = "qwen3"
	}
	cfg.Activity = &act
	cfg.Stream = &stream
	s := New(cfg)
	answer, err := s.Ask(context.Background(), "What do the notes say?")
	return run{answer: answer, err: err, activity: act.String(), stream: stream.String(), tools: tools, srv: srv, sess: s}
}

// chatBodies decodes the recorded chat request bodies.
func chatBodies(t *testing.T, srv *scripted.Server) []map[string]any {
	var out []map[string]any
	for _, r := range srv.ChatRequests() {
		var m map[string]any
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func messages(body map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range body["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

const readAndAnswer = `{"turns":[
	{"text":"Let me look.","calls":[{"name":"read_file","args":{"path":"notes.txt"}}]},
	{"text":"The notes say: buy milk."}
]}`

func TestReadAndAnswer(t *testing.T) {
	for _, which := range []wire{native, compat} {
		t.Run(string(which), func(t *testing.T) {
			r := ask(t, which, readAndAnswer, Config{}, map[string]string{"notes.txt": "buy milk\n"})
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.answer != "The notes say: buy milk." {
				t.Errorf("answer = %q", r.answer)
			}
			if want := []string{`read_file {"path":"notes.txt"}`}; strings.Join(r.tools.calls, "|") != strings.Join(want, "|") {
				t.Errorf("calls = %q, want %q", r.tools.calls, want)
			}
			if want := "→ read_file notes.txt (9 B)\n"; r.activity != want {
				t.Errorf("activity = %q, want %q", r.activity, want)
			}
			if want := "Let me look.\nThe notes say: buy milk.\n"; r.stream != want {
				t.Errorf("stream = %q, want %q", r.stream, want)
			}
			bodies := chatBodies(t, r.srv)
			if len(bodies) != 2 {
				t.Fatalf("%d chat requests, want 2", len(bodies))
			}
			first := bodies[0]
			if first["stream"] != true || first["model"] != "qwen3" {
				t.Errorf("request: stream=%v model=%v", first["stream"], first["model"])
			}
			if n := len(first["tools"].([]any)); n != 5 {
				t.Errorf("%d tools offered, want 5 (no writes)", n)
			}
			msgs := messages(bodies[1])
			if len(msgs) != 4 {
				t.Fatalf("second request has %d messages, want system, user, assistant, tool", len(msgs))
			}
			if msgs[0]["role"] != "system" || msgs[0]["content"] != SystemPrompt {
				t.Errorf("first message is not the system prompt: %v", msgs[0])
			}
			tool := msgs[3]
			if tool["role"] != "tool" || tool["content"] != "buy milk\n" || tool["tool_call_id"] != "call_1_0" {
				t.Errorf("tool result = %v", tool)
			}
			calls := msgs[2]["tool_calls"].([]any)
			fn := calls[0].(map[string]any)["function"].(map[string]any)
			switch which {
			case native:
				if tool["tool_name"] != "read_file" {
					t.Errorf("native tool result lacks tool_name: %v", tool)
				}
				if bodies[0]["options"].(map[string]any)["num_ctx"] != float64(DefaultNumCtx) {
					t.Errorf("options = %v", bodies[0]["options"])
				}
				if p := fn["arguments"].(map[string]any)["path"]; p != "notes.txt" {
					t.Errorf("native arguments echoed back as %v", fn["arguments"])
				}
			case compat:
				if fn["arguments"] != `{"path":"notes.txt"}` {
					t.Errorf("openai arguments echoed back as %#v, want the JSON string", fn["arguments"])
				}
			}
		})
	}
}

// Bad calls come back to the model as errors it can act on, and the loop
// goes on to the answer.
func TestBadCallsAreFeedback(t *testing.T) {
	for _, which := range []wire{native, compat} {
		t.Run(string(which), func(t *testing.T) {
			js := `{"turns":[
				{"calls":[
					{"name":"read_file","args":{"path":"../outside/secret.txt"}},
					{"name":"read_file","args":{"path":5}},
					{"name":"run_shell","args":{"cmd":"rm -rf /"}},
					{"name":"read_file","args":{"path":"notes.txt"}}
				]},
				{"text":"done"}
			]}`
			r := ask(t, which, js, Config{}, map[string]string{"notes.txt": "ok"})
			if r.err != nil || r.answer != "done" {
				t.Fatalf("answer %q, err %v", r.answer, r.err)
			}
			lines := strings.Split(strings.TrimSuffix(r.activity, "\n"), "\n")
			want := []string{
				"→ read_file ../outside/secret.txt: error: path escapes the sandbox: ../outside/secret.txt",
				`→ read_file {"path":5}: error: path must be a string, got an integer (5)`,
				`→ run_shell {"cmd":"rm -rf /"}: error: unknown tool: "run_shell" (available: `,
				"→ read_file notes.txt (2 B)",
			}
			if len(lines) != len(want) {
				t.Fatalf("activity:\n%s", r.activity)
			}
			for i := range want {
				if !strings.HasPrefix(lines[i], want[i]) {
					t.Errorf("activity line %d = %q, want prefix %q", i, lines[i], want[i])
				}
			}
			// Each result is matched to its call, in order.
			msgs := messages(chatBodies(t, r.srv)[1])
			results := msgs[3:]
			if len(results) != 4 {
				t.Fatalf("%d results sent back, want 4", len(results))
			}
			for i, res := range results {
				if id := res["tool_call_id"]; id != "call_1_"+string(rune('0'+i)) {
					t.Errorf("result %d answers %v", i, id)
				}
			}
			if !strings.Contains(results[2]["content"].(string), `unknown tool: "run_shell"`) {
				t.Errorf("unknown tool result = %v", results[2]["content"])
			}
			if results[3]["content"] != "ok" {
				t.Errorf("last result = %v", results[3]["content"])
			}
		})
	}
}

// OpenAI-compatible servers can send arguments that are not JSON at all.
func TestMalformedArgumentsOpenAI(t *testing.T) {
	js := `{"turns":[
		{"calls":[{"name":"read_file","raw_args":"{\"path\": \"notes"},{"name":"stat","no_id":true,"raw_args":""}]},
		{"text":"sorry"}
	]}`
	r := ask(t, compat, js, Config{}, map[string]string{"notes.txt": "ok"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	msgs := messages(chatBodies(t, r.srv)[1])
	if c := msgs[3]["content"].(string); !strings.Contains(c, "read_file arguments are not valid JSON") {
		t.Errorf("malformed arguments result = %q", c)
	}
	// A call without an id gets one, used on both sides.
	calls := msgs[2]["tool_calls"].([]any)
	id := calls[1].(map[string]any)["id"]
	if id == "" || id == nil || msgs[4]["tool_call_id"] != id {
		t.Errorf("call id %v, result answers %v", id, msgs[4]["tool_call_id"])
	}
	if c := msgs[4]["content"].(string); !strings.Contains(c, `stat needs "path"`) {
		t.Errorf("empty arguments result = %q", c)
	}
}

func TestTurnCap(t *testing.T) {
	js := `{"turns":[
		{"calls":[{"name":"read_file","args":{"path":"a"}}]},
		{"calls":[{"name":"read_file","args":{"path":"b"}}]},
		{"calls":[{"name":"read_file","args":{"path":"c"}}]}
	]}`
	r := ask(t, native, js, Config{MaxTurns: 2}, nil)
	if !errors.Is(r.err, ErrTurnCap) {
		t.Fatalf("err = %v, want ErrTurnCap", r.err)
	}
	if !strings.Contains(r.err.Error(), "all 2 turns (--max-turns)") {
		t.Errorf("message = %q", r.err)
	}
	if len(r.srv.ChatRequests()) != 2 {
		t.Errorf("%d chat requests, want 2", len(r.srv.ChatRequests()))
	}
	if len(r.tools.calls) != 1 {
		t.Errorf("calls run: %q; the last reply's calls must not run", r.tools.calls)
	}
}

func TestServerErrors(t *testing.T) {
	closed := scripted.Start(scripted.Script{})
	closed.Close()
	cases := []struct {
		name   string
		which  wire
		js     string
		model  string
		cfg    Config
		kind   error
		substr []string
	}{
		{"model not found", native, `{"turns":[{"text":"x"}]}`, "llama9", Config{}, ErrModelNotFound,
			[]string{`model "llama9" is not installed`, "'ollama pull llama9'", "qwen3:latest"}},
		{"no tools", native, `{"models":[{"name":"gemma:2b"},{"name":"qwen3:latest","tools":true}],"turns":[{"text":"x"}]}`, "gemma:2b", Config{}, ErrNoTools,
			[]string{`model "gemma:2b" does not support tools`, "with tool support: qwen3:latest"}},
		{"no tools openai", compat, `{"models":[{"name":"gemma:2b"}],"turns":[{"text":"x"}]}`, "gemma:2b", Config{}, ErrNoTools,
			[]string{`model "gemma:2b" does not support tools`, "registry.ollama.ai/library/gemma:2b does not support tools"}},
		{"not found openai", compat, `{"turns":[{"text":"x"}]}`, "llama9", Config{}, ErrModelNotFound,
			[]string{`has no model "llama9"`, "'ollama pull llama9'"}},
		{"http 500", native, `{"turns":[{"fail":"http500"}]}`, "", Config{}, ErrHTTP, []string{"answered HTTP 500: fakellm: simulated server failure"}},
		{"http 500 openai", compat, `{"turns":[{"fail":"http500"}]}`, "", Config{}, ErrHTTP, []string{"answered HTTP 500: fakellm: simulated server failure"}},
		{"drop", native, `{"turns":[{"text":"a long reply","fail":"drop"}]}`, "", Config{}, ErrStream, []string{"broke off"}},
		{"drop openai", compat, `{"turns":[{"text":"a long reply","fail":"drop"}]}`, "", Config{}, ErrStream, []string{"broke off"}},
		{"error line", native, `{"turns":[{"text":"a long reply","fail":"error"}]}`, "", Config{}, ErrStream, []string{"failed in the middle of its reply: fakellm: simulated failure mid-stream"}},
		// Ollama's OpenAI layer drops the error and ends the stream
		// without [DONE]; llama.cpp's server sends an error event.
		{"error line openai", compat, `{"turns":[{"text":"a long reply","fail":"error"}]}`, "", Config{}, ErrStream, []string{"broke off before it was complete", "drops the error"}},
		{"error line llama.cpp", compat, `{"openai":"llamacpp","turns":[{"text":"a long reply","fail":"error"}]}`, "", Config{}, ErrStream, []string{"failed in the middle of its reply: fakellm: simulated failure mid-stream"}},
		{"hang", native, `{"turns":[{"text":"a long reply","fail":"hang"}]}`, "", Config{ReplyTimeout: 50 * time.Millisecond}, ErrTimeout, []string{"no complete reply within 50ms (--model-timeout)"}},
		{"hang openai", compat, `{"turns":[{"fail":"hang"}]}`, "", Config{ReplyTimeout: 50 * time.Millisecond}, ErrTimeout, []string{"no complete reply"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Model = c.model
			r := ask(t, c.which, c.js, c.cfg, nil)
			if !errors.Is(r.err, c.kind) {
				t.Fatalf("err = %v, want %v", r.err, c.kind)
			}
			for _, s := range c.substr {
				if !strings.Contains(r.err.Error(), s) {
					t.Errorf("message %q lacks %q", r.err, s)
				}
			}
			if h := r.sess.History(); len(h) != 1 {
				t.Errorf("history after a failed question has %d messages, want only the system prompt", len(h))
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		for _, which := range []wire{native, compat} {
			b := backend(t, which, closed.URL)
			err := b.CheckModel(context.Background(), "qwen3")
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "connection refused") {
				t.Errorf("%s: err = %v", which, err)
			}
			_, err = New(Config{Backend: b, Tools: newFakeTools(t, nil), Model: "qwen3"}).Ask(context.Background(), "hi")
			if !errors.Is(err, ErrUnreachable) {
				t.Errorf("%s: Ask err = %v", which, err)
			}
		}
		err := backend(t, native, closed.URL).CheckModel(context.Background(), "qwen3")
		want := "cannot reach Ollama at " + closed.URL + ": connection refused. moat ask/chat need a running Ollama (start it with 'ollama serve') and a model with tool support (e.g. 'ollama pull qwen3'). A server elsewhere: --host URL or OLLAMA_HOST; llama.cpp, LM Studio, vLLM: --api openai. moat tool works without a model, and moat doctor shows what is missing."
		if err.Error() != want {
			t.Errorf("message:\n%s\nwant\n%s", err, want)
		}
	})
}

func TestCheckModelAndToolModels(t *testing.T) {
	srv := script(t, `{"models":[{"name":"gemma:2b"},{"name":"qwen3:latest","tools":true},{"name":"llama3.1:8b","tools":true}],"turns":[]}`)
	o := backend(t, native, srv.URL)
	ctx := context.Background()
	names, err := o.ToolModels(ctx)
	if err != nil || strings.Join(names, ",") != "qwen3:latest,llama3.1:8b" {
		t.Errorf("ToolModels = %q, %v", names, err)
	}
	if err := o.CheckModel(ctx, "qwen3"); err != nil {
		t.Errorf("CheckModel(qwen3) = %v", err)
	}
	if err := o.CheckModel(ctx, "gemma:2b"); !errors.Is(err, ErrNoTools) {
		t.Errorf("CheckModel(gemma:2b) = %v", err)
	}
	if err := o.CheckModel(ctx, "nope"); !errors.Is(err, ErrModelNotFound) {
		t.Errorf("CheckModel(nope) = %v", err)
	}
	oa := backend(t, compat, srv.URL)
	if names, err := oa.ToolModels(ctx); err != nil || len(names) != 3 || names[0] != "gemma:2b" {
		t.Errorf("openai ToolModels = %q, %v", names, err)
	}

	none := script(t, `{"models":[{"name":"gemma:2b"}],"turns":[]}`)
	if _, err := backend(t, native, none.URL).ToolModels(ctx); !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "ollama pull qwen3") {
		t.Errorf("no tool models: %v", err)
	}
}

// Text from the model reaches the terminal escaped, even when an escape
// sequence or a multi-byte character is split across chunks.
func TestStreamIsSanitised(t *testing.T) {
	js := `{"turns":[{"text":"ok\u001b]52;c;ZWNobyBoaQ==\u0007 \u202eevil\r\nhé€llo"}]}`
	r := ask(t, native, js, Config{}, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := `ok\x1b]52;c;ZWNobyBoaQ==\x07 \u202eevil\r` + "\nhé€llo\n"
	if r.stream != want {
		t.Errorf("stream = %q, want %q", r.stream, want)
	}
	if strings.ContainsAny(r.stream, "\x1b\x07\r\u202e") {
		t.Error("raw control characters reached the stream")
	}
}

func TestTranscript(t *testing.T) {
	var tr bytes.Buffer
	r := ask(t, native, readAndAnswer, Config{Transcript: &tr}, map[string]string{"notes.txt": "buy milk\n"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	var roles []string
	for _, line := range strings.Split(strings.TrimSpace(tr.String()), "\n") {
		var m Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,assistant" {
		t.Errorf("transcript roles = %s", got)
	}
}

// Two questions in one session share the history.
func TestSessionKeepsHistory(t *testing.T) {
	srv := script(t, `{"turns":[{"text":"one"},{"text":"two"}]}`)
	s := New(Config{Backend: backend(t, native, srv.URL), Tools: newFakeTools(t, nil), Model: "qwen3"})
	for _, q := range []string{"first?", "second?"} {
		if _, err := s.Ask(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	msgs := messages(chatBodies(t, srv)[1])
	var got []string
	for _, m := range msgs {
		got = append(got, m["role"].(string)+":"+m["content"].(string))
	}
	if want := "user:first?|assistant:one|user:second?"; strings.Join(got[1:], "|") != want {
		t.Errorf("second request messages = %q", got)
	}
}

// A large result is cut to its share of the window with a notice.
func TestLargeResultTruncated(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 1000) // 17 KB
	r := ask(t, native, readAndAnswer, Config{NumCtx: 4096}, map[string]string{"notes.txt": big})
	if r.err != nil {
		t.Fatal(r.err)
	}
	msgs := messages(chatBodies(t, r.srv)[1])
	c := msgs[3]["content"].(string)
	// 17 bytes a line: 233 whole lines fit, and the model is told where to go on.
	if len(c) > resultLimit(4096) || !strings.HasSuffix(c, "0123456789abcdef\n[truncated: result was 17.0 KB; showed lines 1-233; call read_file with offset=234 (and a smaller limit) to read on]") ||
		strings.Count(c, "0123456789abcdef\n") != 233 {
		t.Errorf("result of %d bytes ends %q", len(c), c[max(0, len(c)-100):])
	}
	if !strings.Contains(r.activity, "(17.0 KB, cut to 4.1 KB for the context window)") {
		t.Errorf("activity = %q", r.activity)
	}
}
