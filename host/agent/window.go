package agent

import (
	"context"
	"strconv"
	"strings"

	"github.com/ollama/ollama/api"
)

// Window is what an Ollama server says about a model's context window.
// Zero means it does not say.
type Window struct {
	// Trained is the context length the model was trained for
	// (/api/show's model_info, "<architecture>.context_length").
	Trained int
	// Param is a num_ctx parameter set on the model (a Modelfile's
	// PARAMETER num_ctx, as /api/show lists it).
	Param int
	// Loaded is the context the server runs the model with now, when it
	// is loaded (/api/ps): the server's own setting (OLLAMA_CONTEXT_LENGTH,
	// or its default for the machine) applied to this model.
	Loaded int
	// OpenAI: the server is Ollama, spoken to over its OpenAI-compatible
	// API, which has no num_ctx: unless the model's parameter or the
	// loaded model says otherwise, Ollama runs the model at its own
	// default (OllamaDefaultNumCtx on a machine without a GPU, more with
	// one), whatever window moat keeps to.
	OpenAI bool
}

// OllamaDefaultNumCtx is the context Ollama runs a model with when nothing
// sets it, on a machine without a GPU (its smallest default).
const OllamaDefaultNumCtx = 4096

// ContextWindow asks Ollama's own API on the same server about model's
// context window, for a server that is Ollama; ok is false for any other
// (or when it cannot tell). Over the OpenAI-compatible API Ollama applies
// its model's parameter and its own setting, as natively without num_ctx.
func (o *OpenAI) ContextWindow(ctx context.Context, model string) (w Window, ok bool) {
	w, err := NewOllama(o.base, o.hc).ContextWindow(ctx, model)
	if err != nil {
		return Window{}, false
	}
	w.OpenAI = true
	return w, true
}

// ContextWindow asks the server about model's context window. A server
// that cannot tell leaves the fields zero; only a failure to ask at all is
// an error.
func (o *Ollama) ContextWindow(ctx context.Context, model string) (Window, error) {
	show, err := o.client.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		return Window{}, o.explainAt(ctx, "/api/show", model, err)
	}
	var w Window
	for k, v := range show.ModelInfo {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && f > 0 {
			w.Trained = int(f)
		}
	}
	for _, line := range strings.Split(show.Parameters, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "num_ctx" {
			w.Param, _ = strconv.Atoi(f[1])
		}
	}
	if ps, err := o.client.ListRunning(ctx); err == nil {
		for _, m := range ps.Models {
			if m.Name == model || m.Model == model || m.Name == model+":latest" {
				w.Loaded = m.ContextLength
			}
		}
	}
	return w, nil
}
