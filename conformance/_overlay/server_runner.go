// Added to the vendored package github.com/ollama/ollama/server by
// go build -overlay. It is the one file of the conformance server that sits
// inside Ollama's package, because the scheduler's hooks (newServerFn,
// getGpuFn, getSystemInfoFn) are unexported: MoatServe is Serve
// (routes.go) without the GPU discovery, blob pruning and runner
// subprocess, and the scheduler's real load path gets an in-process
// llm.LlamaServer whose Completion is the scripted generator. Every route,
// template, renderer, parser and the OpenAI middleware are Ollama's own.

package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/fs/ggml"
	"github.com/ollama/ollama/llm"
	"github.com/ollama/ollama/ml"
)

// MoatGenerator stands in for the model: it gets the request the runner
// would get (the prompt Ollama rendered, its options) and streams raw text
// through fn, ending with a response whose Done is set.
type MoatGenerator func(ctx context.Context, req llm.CompletionRequest, fn func(llm.CompletionResponse)) error

// MoatServe serves Ollama's routes on ln until ctx ends. numCtx is the
// default context length (Serve picks it from the GPUs' memory: 4096 with
// none). wrap, if not nil, wraps the handler.
func MoatServe(ctx context.Context, ln net.Listener, numCtx int, gen MoatGenerator, wrap func(http.Handler) http.Handler) error {
	s := &Server{addr: ln.Addr(), defaultNumCtx: numCtx}
	h, err := s.GenerateRoutes(nil)
	if err != nil {
		return err
	}
	sched := InitScheduler(ctx)
	sched.newServerFn = func(_ ml.SystemInfo, _ []ml.DeviceInfo, model string, _ *ggml.GGML, _, _ []string, opts api.Options, _ int) (llm.LlamaServer, error) {
		return &moatRunner{gen: gen, model: model, numCtx: opts.NumCtx}, nil
	}
	sched.getGpuFn = func(context.Context, []ml.FilteredRunnerDiscovery) []ml.DeviceInfo { return nil }
	sched.getSystemInfoFn = func() ml.SystemInfo {
		return ml.SystemInfo{TotalMemory: 16 << 30, FreeMemory: 12 << 30, ThreadCount: 2}
	}
	s.sched = sched
	sched.Run(ctx)
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	srv := &http.Server{Handler: handler}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// moatRunner is the loaded "model": no process, no weights.
type moatRunner struct {
	gen    MoatGenerator
	model  string
	numCtx int
}

func (r *moatRunner) ModelPath() string { return r.model }
func (r *moatRunner) Load(context.Context, ml.SystemInfo, []ml.DeviceInfo, bool) ([]ml.DeviceID, error) {
	return nil, nil
}
func (r *moatRunner) Ping(context.Context) error             { return nil }
func (r *moatRunner) WaitUntilRunning(context.Context) error { return nil }
func (r *moatRunner) Completion(ctx context.Context, req llm.CompletionRequest, fn func(llm.CompletionResponse)) error {
	return r.gen(ctx, req, fn)
}
func (r *moatRunner) Embedding(context.Context, string) ([]float32, int, error) {
	return nil, 0, errors.New("moat conformance build: no embeddings")
}

// Tokenize counts words: the server uses it to fit the prompt into
// num_ctx (chatPrompt drops the oldest messages that do not fit), so a
// word stands for a token.
func (r *moatRunner) Tokenize(_ context.Context, s string) ([]int, error) {
	toks := make([]int, len(strings.Fields(s)))
	for i := range toks {
		toks[i] = i
	}
	return toks, nil
}
func (r *moatRunner) Detokenize(context.Context, []int) (string, error) { return "", nil }
func (r *moatRunner) Close() error                                      { return nil }
func (r *moatRunner) VRAMSize() uint64                                  { return 0 }
func (r *moatRunner) TotalSize() uint64                                 { return 1 << 20 }
func (r *moatRunner) VRAMByGPU(ml.DeviceID) uint64                      { return 0 }
func (r *moatRunner) Pid() int                                          { return -1 }
func (r *moatRunner) GetPort() int                                      { return 0 }
func (r *moatRunner) GetDeviceInfos(context.Context) []ml.DeviceInfo    { return nil }
func (r *moatRunner) HasExited() bool                                   { return false }
func (r *moatRunner) ContextLength() int                                { return r.numCtx }
