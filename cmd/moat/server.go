package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/moatdev/moat/host/agent"
)

// modelServer is the one place --host, $OLLAMA_HOST and --api become a
// backend. A host whose path ends in /v1 is the OpenAI-compatible API's
// address: with --api left at its default, that API is used and note says
// so; with --api ollama given, it is refused, since Ollama's native API
// would answer 404 there.
func modelServer(host, api string, apiGiven bool, getenv func(string) string, hc *http.Client) (b agent.Backend, base *url.URL, note string, err error) {
	base, err = serverURL(host, getenv)
	if err != nil {
		return nil, nil, "", err
	}
	if p := strings.TrimSuffix(base.Path, "/"); p == "/v1" || strings.HasSuffix(p, "/v1") {
		switch {
		case api == "ollama" && apiGiven:
			return nil, nil, "", usagef("the model server's address %s ends in /v1, the OpenAI-compatible API's path; use --api openai, or drop /v1 for Ollama's native API", base)
		case api == "ollama":
			api = "openai"
			note = fmt.Sprintf("moat: %s ends in /v1, so moat speaks the OpenAI-compatible API (--api openai)", base)
		}
		// The OpenAI backend adds /v1 itself.
		u := *base
		u.Path = strings.TrimSuffix(p, "/v1")
		base = &u
	}
	if api == "openai" {
		return agent.NewOpenAI(base, hc), base, note, nil
	}
	return agent.NewOllama(base, hc), base, note, nil
}

// isSet reports whether the flag name was given (on the command line, in
// the environment or in the config file) rather than left at its default.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// contextWindow is the one place the context window is chosen, when
// --num-ctx does not give it: the num_ctx parameter set on the model, else
// the context the server runs the loaded model with (its own setting),
// else OLLAMA_CONTEXT_LENGTH from moat's environment (the same machine's
// Ollama setting, usually), else moat's default; never more than the model
// was trained for, never less than moat needs. why says where the number
// came from, for doctor and chat.
func contextWindow(w agent.Window, known bool, getenv func(string) string) (n int, why string) {
	env, _ := strconv.Atoi(getenv("OLLAMA_CONTEXT_LENGTH"))
	switch {
	case !known:
		n, why = agent.DefaultNumCtx, "moat's default: the server does not say; set --num-ctx to its context size"
	case w.Param > 0:
		n, why = w.Param, "the model's num_ctx parameter"
	case w.Loaded > 0:
		n, why = w.Loaded, "as the server runs the loaded model"
	case env > 0:
		n, why = env, "OLLAMA_CONTEXT_LENGTH"
	case w.OpenAI:
		// Over /v1 moat cannot send num_ctx: a window larger than the
		// server's would have Ollama drop the conversation's start
		// without a word.
		n, why = agent.OllamaDefaultNumCtx, "Ollama's own default without a GPU: over the OpenAI-compatible API moat cannot set num_ctx; --num-ctx or OLLAMA_CONTEXT_LENGTH sets another"
	default:
		n, why = agent.DefaultNumCtx, "moat's default; --num-ctx or OLLAMA_CONTEXT_LENGTH sets another"
	}
	if w.Trained > 0 && n > w.Trained {
		n, why = w.Trained, why+", cut to the model's trained length"
	}
	if n < minNumCtx {
		n, why = minNumCtx, why+fmt.Sprintf(", raised to moat's least (%d)", minNumCtx)
	}
	return n, why
}

// windowOf asks b, if it can tell, about model's context window.
func windowOf(ctx context.Context, b agent.Backend, model string) (agent.Window, bool, error) {
	if oa, ok := b.(*agent.OpenAI); ok {
		w, ok := oa.ContextWindow(ctx, model) // Ollama's, if it is Ollama
		return w, ok, nil
	}
	o, ok := b.(*agent.Ollama)
	if !ok {
		return agent.Window{}, false, nil
	}
	w, err := o.ContextWindow(ctx, model)
	return w, err == nil, err
}
