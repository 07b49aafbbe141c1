// Command ollamareal is Ollama's own server (github.com/ollama/ollama/server,
// at the version moat's go.mod requires) with the neural network replaced
// by a generator that streams scripted raw text. Everything the text passes
// through after the generator is Ollama's code: the routes, /api/create,
// chat templates and renderers, the thinking and tool-call parsers, the
// scheduler, and the OpenAI compatibility layer on /v1. moat's conformance
// tests (cmd/moat, TestConformance) run the agent against it.
//
// It cannot be built with a plain go build: make conformance vendors the
// module and adds the files in _overlay/ with go build -overlay (see
// build.sh).
//
//	OLLAMA_MODELS=DIR ollamareal [-addr 127.0.0.1:0] [-num-ctx 4096]
//
// It prints "ready http://ADDR" on stdout when it serves. Besides Ollama's
// routes it answers these, which drive the scripted model:
//
//	POST /moat/models   [{"name", "family", "parameters"}]: create models of
//	                    the built-in families through the real /api/blobs
//	                    and /api/create (families: qwen3, qwen3-coder,
//	                    qwen3.5, gpt-oss, and plain, which has no tools)
//	POST /moat/replies  [reply, ...]: replace the queue; each completion the
//	                    scheduler runs takes the next reply
//	GET  /moat/prompts  what each completion was asked: the prompt Ollama
//	                    rendered and its num_ctx
//	GET  /moat/wire     every chat exchange (/api/chat, /v1/chat/completions)
//	                    as the server wrote it, body bytes verbatim
//
// A reply is {"thought", "text", "pieces", "done_reason", "error",
// "error_after", "delay_ms"}: thought is streamed before text unless the
// request turned thinking off; text is streamed in pieces of three characters (so tags are
// cut as a tokenizer cuts them) unless pieces gives them; done_reason is
// "stop" (the default) or "length"; error fails the completion before any
// output, error_after after that many pieces.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/fs/ggml"
	"github.com/ollama/ollama/llm"
	"github.com/ollama/ollama/server"
)

//go:embed templates/*.gotmpl
var templates embed.FS

// family is how a model of one family is created: the architecture its
// GGUF names, and its template or built-in renderer and parser, as the
// models in Ollama's library are made.
type family struct {
	arch     string
	template string // file under templates/
	renderer string
	parser   string
}

var families = map[string]family{
	"qwen3":       {arch: "qwen3", template: "qwen3.gotmpl"},
	"qwen3-coder": {arch: "qwen3moe", renderer: "qwen3-coder", parser: "qwen3-coder"},
	"qwen3.5":     {arch: "qwen35", renderer: "qwen3.5", parser: "qwen3.5"},
	"gpt-oss":     {arch: "gptoss", template: "gptoss.gotmpl"},
	// plain: a template that offers no tools, as a model without tool
	// support has.
	"plain": {arch: "llama", template: "plain.gotmpl"},
}

type modelSpec struct {
	Name       string         `json:"name"`
	Family     string         `json:"family"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

type reply struct {
	// Thought is raw text streamed before Text unless the chat request
	// turned thinking off (think false natively, reasoning_effort "none"
	// over /v1), as a model that obeys does not think then.
	Thought    string   `json:"thought,omitempty"`
	Text       string   `json:"text,omitempty"`
	Pieces     []string `json:"pieces,omitempty"`
	DoneReason string   `json:"done_reason,omitempty"`
	Error      string   `json:"error,omitempty"`
	ErrorAfter int      `json:"error_after,omitempty"`
	DelayMS    int      `json:"delay_ms,omitempty"`
}

type prompt struct {
	Prompt string `json:"prompt"`
	NumCtx int    `json:"num_ctx"`
	Think  bool   `json:"-"`
}

type exchange struct {
	Path     string `json:"path"`
	Request  string `json:"request"`
	Status   int    `json:"status"`
	Response string `json:"response"`
}

type state struct {
	mu       sync.Mutex
	thinkOff bool // the latest chat request turned thinking off
	queue    []reply
	prompts  []prompt
	wire     []exchange
}

func (s *state) generate(ctx context.Context, req llm.CompletionRequest, fn func(llm.CompletionResponse)) error {
	s.mu.Lock()
	r := reply{Error: "ollamareal: no scripted reply left for this completion"}
	if len(s.queue) > 0 {
		r, s.queue = s.queue[0], s.queue[1:]
	}
	thinkOff := s.thinkOff
	p := prompt{Prompt: req.Prompt}
	if req.Options != nil {
		p.NumCtx = req.Options.NumCtx
	}
	s.prompts = append(s.prompts, p)
	s.mu.Unlock()

	if r.DelayMS > 0 {
		select {
		case <-time.After(time.Duration(r.DelayMS) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	pieces := r.Pieces
	if pieces == nil {
		text := r.Text
		if !thinkOff {
			text = r.Thought + text
		}
		pieces = split(text, 3)
	}
	if r.Error != "" && r.ErrorAfter == 0 {
		return errors.New(r.Error)
	}
	for i, p := range pieces {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.Error != "" && i == r.ErrorAfter {
			return errors.New(r.Error)
		}
		fn(llm.CompletionResponse{Content: p})
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	done := llm.DoneReasonStop
	if r.DoneReason == "length" {
		done = llm.DoneReasonLength
	}
	fn(llm.CompletionResponse{
		Done:               true,
		DoneReason:         done,
		PromptEvalCount:    len(strings.Fields(req.Prompt)),
		PromptEvalDuration: time.Millisecond,
		EvalCount:          len(pieces),
		EvalDuration:       time.Duration(len(pieces)+1) * time.Millisecond,
	})
	return nil
}

// split cuts s into pieces of n characters, as a tokenizer streams text:
// a tag such as <think> arrives cut, which the parsers must put together.
func split(s string, n int) []string {
	var out []string
	for s != "" {
		i := 0
		for k := 0; k < n && i < len(s); k++ {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func main() {
	gin.SetMode(gin.ReleaseMode) // no route listing on stdout
	log.SetFlags(0)
	log.SetPrefix("ollamareal: ")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	numCtx := flag.Int("num-ctx", 4096, "the default context length (Ollama's on a machine without a GPU)")
	flag.Parse()
	if os.Getenv("OLLAMA_MODELS") == "" {
		log.Fatal("set OLLAMA_MODELS to an empty folder: the model store this server writes")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	st := &state{}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- server.MoatServe(ctx, ln, *numCtx, st.generate, st.wrap(base)) }()
	// The server is up once its own root route answers.
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 200 {
			log.Fatalf("the server did not answer: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("ready", base)
	if err := <-errc; err != nil {
		log.Fatal(err)
	}
}

// wrap adds the /moat/ routes and records the chat exchanges.
func (st *state) wrap(base string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/moat/models":
				var specs []modelSpec
				if err := json.NewDecoder(r.Body).Decode(&specs); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				for _, sp := range specs {
					if err := create(r.Context(), base, sp); err != nil {
						http.Error(w, fmt.Sprintf("creating %s: %v", sp.Name, err), http.StatusInternalServerError)
						return
					}
				}
				fmt.Fprintf(w, "created %d\n", len(specs))
			case "/moat/replies":
				var rs []reply
				dec := json.NewDecoder(r.Body)
				dec.DisallowUnknownFields()
				if err := dec.Decode(&rs); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				st.mu.Lock()
				st.queue = rs
				st.mu.Unlock()
				fmt.Fprintf(w, "queued %d\n", len(rs))
			case "/moat/prompts":
				st.mu.Lock()
				defer st.mu.Unlock()
				writeJSON(w, st.prompts)
			case "/moat/wire":
				st.mu.Lock()
				defer st.mu.Unlock()
				writeJSON(w, st.wire)
			case "/api/chat", "/v1/chat/completions":
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var think struct {
					Think           *bool   `json:"think"`
					ReasoningEffort *string `json:"reasoning_effort"`
				}
				json.Unmarshal(body, &think) // a level in think is not a bool: thinking is on
				st.mu.Lock()
				st.thinkOff = think.Think != nil && !*think.Think || think.ReasoningEffort != nil && *think.ReasoningEffort == "none"
				st.mu.Unlock()
				// The request is on the record before it is answered: a
				// client may read the record as soon as its reply ends,
				// before this handler returns.
				st.mu.Lock()
				i := len(st.wire)
				st.wire = append(st.wire, exchange{Path: r.URL.Path, Request: string(body)})
				st.mu.Unlock()
				tw := &tee{ResponseWriter: w}
				h.ServeHTTP(tw, r)
				st.mu.Lock()
				st.wire[i].Status, st.wire[i].Response = tw.status, tw.buf.String()
				st.mu.Unlock()
			default:
				h.ServeHTTP(w, r)
			}
		})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// tee keeps a copy of what the handler writes.
type tee struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
}

func (t *tee) WriteHeader(code int) {
	if t.status == 0 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *tee) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	t.buf.Write(b)
	return t.ResponseWriter.Write(b)
}

func (t *tee) Flush() { t.ResponseWriter.(http.Flusher).Flush() }

// CloseNotify is asked for by gin's streaming.
func (t *tee) CloseNotify() <-chan bool {
	return t.ResponseWriter.(http.CloseNotifier).CloseNotify() //nolint:staticcheck // gin's Context.Stream asks for it
}

// create makes one model as a person would with a Modelfile: the GGUF
// uploaded as a blob, then /api/create with the family's template or
// renderer and parser.
func create(ctx context.Context, base string, sp modelSpec) error {
	fam, ok := families[sp.Family]
	if !ok {
		return fmt.Errorf("unknown family %q", sp.Family)
	}
	var gguf bytes.Buffer
	if err := writeGGUF(&gguf, fam.arch); err != nil {
		return err
	}
	digest := fmt.Sprintf("sha256:%x", sha256.Sum256(gguf.Bytes()))
	u, _ := url.Parse(base)
	c := api.NewClient(u, http.DefaultClient)
	if err := c.CreateBlob(ctx, digest, bytes.NewReader(gguf.Bytes())); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	req := &api.CreateRequest{
		Model:      sp.Name,
		Files:      map[string]string{fam.arch + ".gguf": digest},
		Renderer:   fam.renderer,
		Parser:     fam.parser,
		Parameters: sp.Parameters,
	}
	if fam.template != "" {
		t, err := templates.ReadFile("templates/" + fam.template)
		if err != nil {
			return err
		}
		req.Template = string(t)
	}
	stream := false
	req.Stream = &stream
	return c.Create(ctx, req, func(api.ProgressResponse) error { return nil })
}

// writeGGUF writes a model file with one layer of one-element tensors and
// a one-token vocabulary: enough for Ollama to read its architecture and
// create and load the model, nothing to run.
func writeGGUF(w *bytes.Buffer, arch string) error {
	f, err := os.CreateTemp("", "ollamareal-*.gguf")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	kv := ggml.KV{
		"general.architecture":            arch,
		arch + ".block_count":             uint32(1),
		arch + ".context_length":          uint32(32768),
		arch + ".embedding_length":        uint32(8),
		arch + ".attention.head_count":    uint32(1),
		arch + ".attention.head_count_kv": uint32(1),
		"tokenizer.ggml.model":            "gpt2",
		"tokenizer.ggml.tokens":           []string{"a"},
		"tokenizer.ggml.scores":           []float32{0},
		"tokenizer.ggml.token_type":       []int32{1},
	}
	var ts []*ggml.Tensor
	for _, n := range []string{"token_embd.weight", "blk.0.attn_norm.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight",
		"blk.0.attn_v.weight", "blk.0.attn_output.weight", "blk.0.ffn_norm.weight", "blk.0.ffn_gate.weight",
		"blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "output.weight"} {
		ts = append(ts, &ggml.Tensor{Name: n, Shape: []uint64{1}, WriterTo: bytes.NewReader(make([]byte, 4))})
	}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	return err
}
