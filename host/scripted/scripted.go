// Package scripted is the scripted model server: an in-process stand-in
// for an Ollama (or OpenAI-compatible) server that answers from a
// [Script] instead of a model. It is not only a test's: moat replay
// plays a recording's model replies through it (host/recording), so it
// ships in the moat binary and is held to the same standard; the tests
// script it too (moattest's fakellm command starts it, and its error
// texts still say "fakellm:", which scripts match). It speaks the native
// API (/api/chat as an NDJSON stream, /api/tags, /api/show,
// /api/version) and the OpenAI-compatible one (/v1/chat/completions as
// server-sent events, /v1/models) as the real servers put them on the
// wire, replies to chat requests from a script, and records every
// request so a test can check what the client sent.
//
// Faithfulness matters more than brevity here, and the conformance suite
// (cmd/moat TestConformanceWire) checks the shapes against Ollama's own
// server: text streams in small chunks, thinking and content in chunks of
// their own, native tool calls arrive whole (arguments as an object), and
// so do Ollama's OpenAI ones (arguments as a JSON string), while
// llama.cpp's (Script.OpenAI "llamacpp") split the string over several
// chunks, as vLLM's do; errors have the servers' status codes and bodies,
// and a reply can end cut off ("length"). Thinking streams
// before the content, in message.thinking natively and in reasoning
// (Ollama) or reasoning_content (llama.cpp) deltas; the figures come in
// the native final chunk and in an OpenAI event of their own with no
// choices after the finish_reason (Ollama's usage when
// stream_options.include_usage asks; llama.cpp's timings always). The
// think field is checked as Ollama 0.17 checks it. A turn can also write
// its calls as text in one model family's format, as a server without a
// tool parser passes them on.
package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Script drives the server.
type Script struct {
	// Models are the installed models; empty means one, qwen3:latest,
	// with tool support.
	Models []Model `json:"models,omitempty"`
	// Turns answer the chat requests in order, whichever API they use. A
	// request beyond the last turn gets HTTP 500 naming the problem.
	Turns []Turn `json:"turns"`
	// OpenAI is whose OpenAI-compatible stream /v1/chat/completions
	// imitates: "ollama" (the default: Ollama's compatibility layer, each
	// call whole in one chunk, role and content in every delta, a failure
	// mid-stream dropped and the stream closed without [DONE]) or
	// "llamacpp" (llama.cpp's server: each call's arguments split over
	// several deltas, as vLLM streams them too, reasoning_content, timings,
	// an error event mid-stream).
	OpenAI string `json:"openai,omitempty"`
}

// Model is an installed model.
type Model struct {
	Name     string `json:"name"`
	Tools    bool   `json:"tools"`              // capabilities include "tools"
	Thinking bool   `json:"thinking,omitempty"` // capabilities include "thinking"
	// Family is details.family in /api/show; "gptoss" takes think levels,
	// and thinks even when the request turns thinking off, as Ollama
	// keeps gpt-oss's reasoning on.
	Family string `json:"family,omitempty"`
	// ContextLength is the trained context length /api/show reports in
	// model_info; 0 leaves it out.
	ContextLength int `json:"context_length,omitempty"`
	// NumCtx is a num_ctx parameter set on the model (/api/show's
	// parameters); 0: none.
	NumCtx int `json:"num_ctx,omitempty"`
	// LoadedCtx, if not 0, lists the model in /api/ps as loaded with this
	// context length.
	LoadedCtx int `json:"loaded_ctx,omitempty"`
}

// Turn is the reply to one chat request.
type Turn struct {
	// Thinking streams before Text, unless the request turned thinking
	// off (think false, reasoning_effort "none"), as a model then does
	// not think.
	Thinking string `json:"thinking,omitempty"`
	// ThinkTags puts the thinking into the content as <think>...</think>,
	// as a server without a reasoning parser passes it on.
	ThinkTags bool   `json:"think_tags,omitempty"`
	Text      string `json:"text,omitempty"`
	Calls     []Call `json:"calls,omitempty"`
	// TextCalls writes Calls into the content in this family's format
	// instead of as tool calls: "hermes", "mistral", "llama" or "json".
	TextCalls string `json:"text_calls,omitempty"`
	// PromptTokens and EvalCount are the figures reported; 0 means
	// derived: the request's size over four, and one per chunk streamed.
	PromptTokens int `json:"prompt_tokens,omitempty"`
	EvalCount    int `json:"eval_count,omitempty"`
	// Fail simulates a failure instead of (or part way through) the reply:
	//   "http500": HTTP 500 with an error body, before any chunk (as
	//              Ollama answers a runner that fails before any output);
	//   "drop":    the connection is cut after the first chunk;
	//   "error":   the server fails after the first chunk: natively an
	//              error object in the stream; over OpenAI an error event
	//              (llamacpp), or (ollama) one empty chunk and the end of
	//              the stream without [DONE], as Ollama's compatibility
	//              layer drops the error;
	//   "hang":    the first chunk, then nothing until the client gives up.
	//
	// A turn with nothing in it is what Ollama sends when its parser drops
	// what the model wrote: a call of a tool not offered, text outside any
	// harmony channel, a reply cut inside a call.
	Fail string `json:"fail,omitempty"`
	// DoneReason is why the reply ended as the server says it: "" or
	// "stop" (the model stopped), or "length" (a limit cut it off: the
	// context window, or the server's cap on generated tokens). Natively
	// it is done_reason; over OpenAI finish_reason, where Ollama says
	// "tool_calls" instead whenever the reply has a call.
	DoneReason string `json:"done_reason,omitempty"`
	// DelayMS holds the reply back this many milliseconds, headers
	// included, as Ollama does while it loads the model before a reply.
	DelayMS int `json:"delay_ms,omitempty"`
	// ChunkMS spaces the chunks this many milliseconds apart, as a model
	// generates: a long think takes time.
	ChunkMS int `json:"chunk_ms,omitempty"`

	// alwaysThinks: the model is gpt-oss, which thinks whatever the
	// request says, and whose calls Ollama sends in the reply's last chunk.
	alwaysThinks bool
}

// Call is one tool call in a reply.
type Call struct {
	ID   string `json:"id,omitempty"` // default call_<turn>_<index>
	NoID bool   `json:"no_id,omitempty"`
	Name string `json:"name"`
	// Args is the arguments as JSON (an object, normally). The native API
	// sends it as the arguments object, the OpenAI API as its text.
	Args json.RawMessage `json:"args,omitempty"`
	// RawArgs, when set, is the OpenAI arguments string verbatim, for
	// arguments that are not JSON at all.
	RawArgs *string `json:"raw_args,omitempty"`
}

// Request is one recorded request.
type Request struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// ParseScript reads a script, refusing unknown fields so a typo in a test
// fails loudly.
func ParseScript(b []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("fakellm: script: %w", err)
	}
	for i, t := range s.Turns {
		switch t.Fail {
		case "", "http500", "drop", "error", "hang":
		default:
			return Script{}, fmt.Errorf("fakellm: turn %d: unknown fail %q", i+1, t.Fail)
		}
		switch t.DoneReason {
		case "", "stop", "length":
		default:
			return Script{}, fmt.Errorf("fakellm: turn %d: unknown done_reason %q", i+1, t.DoneReason)
		}
		switch t.TextCalls {
		case "", "hermes", "mistral", "llama", "json":
		default:
			return Script{}, fmt.Errorf("fakellm: turn %d: unknown text_calls %q", i+1, t.TextCalls)
		}
	}
	switch s.OpenAI {
	case "", "ollama", "llamacpp":
	default:
		return Script{}, fmt.Errorf("fakellm: unknown openai %q", s.OpenAI)
	}
	return s, nil
}

// Server is a running fake.
type Server struct {
	URL string

	srv  *httptest.Server
	quit chan struct{}
	once sync.Once

	mu     sync.Mutex // guards the fields below
	script Script
	next   int
	reqs   []Request
}

// Chunk sizes: small, so clients must reassemble.
const (
	textChunk = 4
	argsChunk = 5
)

// Start starts a server for the script.
func Start(s Script) *Server {
	if len(s.Models) == 0 {
		s.Models = []Model{{Name: "qwen3:latest", Tools: true}}
	}
	f := &Server{script: s, quit: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", f.nativeChat)
	mux.HandleFunc("GET /api/tags", f.tags)
	mux.HandleFunc("POST /api/show", f.show)
	mux.HandleFunc("GET /api/ps", f.ps)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"version": "0.17.4"})
	})
	mux.HandleFunc("POST /v1/chat/completions", f.openAIChat)
	mux.HandleFunc("GET /v1/models", f.models)
	f.srv = httptest.NewServer(f.record(mux))
	f.URL = f.srv.URL
	return f
}

// Close stops the server, releasing any reply left hanging.
func (f *Server) Close() {
	f.once.Do(func() {
		close(f.quit)
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
}

// Requests returns every request received so far, in order.
func (f *Server) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// ChatRequests returns the chat requests (either API) received so far.
func (f *Server) ChatRequests() []Request {
	var out []Request
	for _, r := range f.Requests() {
		if r.Path == "/api/chat" || r.Path == "/v1/chat/completions" {
			out = append(out, r)
		}
	}
	return out
}

func (f *Server) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := Request{Method: r.Method, Path: r.URL.Path}
		if json.Valid(body) {
			rec.Body = body
		} else if len(body) > 0 {
			rec.Body, _ = json.Marshal(string(body))
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, rec)
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (f *Server) lookup(name string) (Model, bool) {
	for _, m := range f.script.Models {
		if m.Name == name || m.Name == name+":latest" {
			return m, true
		}
	}
	return Model{}, false
}

// turn checks the model as Ollama does and takes the next scripted reply.
// It returns an HTTP status and message when the request is refused.
func (f *Server) turn(model string, withTools bool, think *thinkValue) (int, Turn, int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if model == "" {
		return 400, Turn{}, 0, "model is required"
	}
	m, ok := f.lookup(model)
	if !ok {
		// Ollama 0.17's chat handler, when the model is not installed.
		return 404, Turn{}, 0, fmt.Sprintf("model '%s' not found", model)
	}
	if withTools && !m.Tools {
		return 400, Turn{}, 0, fullName(m.Name) + " does not support tools"
	}
	// Ollama 0.17's chat handler: thinking on a model without it is
	// refused, and a level only for the harmony (gpt-oss) parser.
	if think != nil && think.on() && !m.Thinking {
		return 400, Turn{}, 0, fmt.Sprintf("%q does not support thinking", model)
	}
	if think != nil && think.level != "" && m.Family != "gptoss" {
		return 400, Turn{}, 0, fmt.Sprintf("think value %q is not supported for this model", think.level)
	}
	if f.next >= len(f.script.Turns) {
		f.next++
		return 500, Turn{}, 0, fmt.Sprintf("fakellm: no scripted reply for chat request %d", f.next)
	}
	t := f.script.Turns[f.next]
	t.alwaysThinks = m.Family == "gptoss"
	f.next++
	if t.Fail == "http500" {
		return 500, Turn{}, 0, "fakellm: simulated server failure"
	}
	return 0, t, f.next, ""
}

// fullName is how Ollama names a model in errors.
func fullName(n string) string {
	if !strings.Contains(n, ":") {
		n += ":latest"
	}
	return "registry.ollama.ai/library/" + n
}

func (f *Server) tags(w http.ResponseWriter, r *http.Request) {
	type details struct {
		Format string `json:"format"`
		Family string `json:"family"`
	}
	type entry struct {
		Name       string    `json:"name"`
		Model      string    `json:"model"`
		ModifiedAt time.Time `json:"modified_at"`
		Size       int64     `json:"size"`
		Digest     string    `json:"digest"`
		Details    details   `json:"details"`
	}
	var out struct {
		Models []entry `json:"models"`
	}
	out.Models = []entry{}
	for i, m := range f.script.Models {
		out.Models = append(out.Models, entry{Name: m.Name, Model: m.Name, ModifiedAt: time.Unix(1700000000-int64(i)*3600, 0).UTC(),
			Size: 5 << 30, Digest: fmt.Sprintf("%064x", i+1), Details: details{Format: "gguf", Family: "fake"}})
	}
	writeJSON(w, 200, out)
}

func (f *Server) show(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	if req.Model == "" {
		req.Model = req.Name
	}
	m, ok := f.lookup(req.Model)
	if !ok {
		writeJSON(w, 404, map[string]string{"error": fmt.Sprintf("model '%s' not found", req.Model)})
		return
	}
	caps := []string{"completion"}
	if m.Tools {
		caps = append(caps, "tools")
	}
	if m.Thinking {
		caps = append(caps, "thinking")
	}
	family := m.Family
	if family == "" {
		family = "fake"
	}
	info := map[string]any{"general.architecture": "fake"}
	if m.ContextLength > 0 {
		info["fake.context_length"] = m.ContextLength
	}
	resp := map[string]any{
		"modelfile":    "FROM " + m.Name,
		"details":      map[string]string{"format": "gguf", "family": family},
		"model_info":   info,
		"capabilities": caps,
		"modified_at":  time.Unix(1700000000, 0).UTC(),
	}
	if m.NumCtx > 0 {
		// Ollama lists parameters one a line, the name padded to 30 columns.
		resp["parameters"] = fmt.Sprintf("%-30s %d\n%-30s \"<|im_end|>\"", "num_ctx", m.NumCtx, "stop")
	}
	writeJSON(w, 200, resp)
}

// ps lists the models scripted as loaded, as /api/ps does.
func (f *Server) ps(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		Name          string            `json:"name"`
		Model         string            `json:"model"`
		Size          int64             `json:"size"`
		Digest        string            `json:"digest"`
		Details       map[string]string `json:"details"`
		ExpiresAt     time.Time         `json:"expires_at"`
		SizeVRAM      int64             `json:"size_vram"`
		ContextLength int               `json:"context_length"`
	}
	out := struct {
		Models []entry `json:"models"`
	}{Models: []entry{}}
	for i, m := range f.script.Models {
		if m.LoadedCtx > 0 {
			out.Models = append(out.Models, entry{Name: m.Name, Model: m.Name, Size: 5 << 30, Digest: fmt.Sprintf("%064x", i+1),
				Details: map[string]string{"format": "gguf", "family": "fake"}, ExpiresAt: time.Unix(1700000300, 0).UTC(), SizeVRAM: 5 << 30, ContextLength: m.LoadedCtx})
		}
	}
	writeJSON(w, 200, out)
}

func (f *Server) models(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list", Data: []entry{}}
	for _, m := range f.script.Models {
		out.Data = append(out.Data, entry{ID: m.Name, Object: "model", Created: 1700000000, OwnedBy: "library"})
	}
	writeJSON(w, 200, out)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// chunks splits s into pieces of at most n bytes, never inside a UTF-8
// character (a real tokenizer emits whole characters or byte pieces, but
// Ollama only sends valid UTF-8 in JSON strings).
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && k > 0 && s[k]&0xc0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func (t Turn) callID(turn, i int) string {
	c := t.Calls[i]
	switch {
	case c.NoID:
		return ""
	case c.ID != "":
		return c.ID
	}
	return fmt.Sprintf("call_%d_%d", turn, i)
}

// load waits out the turn's DelayMS, as a server loading the model does:
// nothing is sent, not even the headers, until the model is ready. It
// reports false when the client gave up or the server closed meanwhile.
func (f *Server) load(r *http.Request, t Turn) bool {
	if t.DelayMS <= 0 {
		return true
	}
	tm := time.NewTimer(time.Duration(t.DelayMS) * time.Millisecond)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-r.Context().Done():
	case <-f.quit:
	}
	return false
}

// pace waits ChunkMS before every chunk but the first, or until the
// client gives up or the server closes.
func (f *Server) pace(r *http.Request, t Turn, sent int) {
	if t.ChunkMS <= 0 || sent == 0 {
		return
	}
	tm := time.NewTimer(time.Duration(t.ChunkMS) * time.Millisecond)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-r.Context().Done():
	case <-f.quit:
	}
}

// stall implements "hang": wait for the client to give up or the server to
// close, then abort the response.
func (f *Server) stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.quit:
	}
	panic(http.ErrAbortHandler)
}
