package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	"github.com/moatdev/moat/host/toolspec"
)

// Ollama speaks Ollama's native API (/api/chat, NDJSON streaming) through
// the official client.
type Ollama struct {
	base   *url.URL
	client *api.Client
}

// NewOllama returns a backend for the Ollama server at base. hc may be nil.
func NewOllama(base *url.URL, hc *http.Client) *Ollama {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Ollama{base: base, client: api.NewClient(base, hc)}
}

func (o *Ollama) String() string { return "Ollama at " + o.base.String() }

// Chat implements Backend. Thinking (message.thinking) and text arrive in
// small chunks, thinking first; tool calls arrive whole, each in one
// chunk; the last chunk says done and carries the figures.
func (o *Ollama) Chat(ctx context.Context, req Request, onDelta func(Delta)) (Message, Usage, error) {
	stream := true
	creq := &api.ChatRequest{
		Model:    req.Model,
		Messages: toOllama(req.Messages),
		Stream:   &stream,
		Tools:    ollamaTools(req.Tools),
		Options:  map[string]any{"num_ctx": req.NumCtx},
		Think:    ollamaThink(req.Think),
	}
	var reply Message
	var usage Usage
	var text, thinking strings.Builder
	done := false
	err := o.client.Chat(ctx, creq, func(r api.ChatResponse) error {
		if r.Message.Thinking != "" || r.Message.Content != "" {
			thinking.WriteString(r.Message.Thinking)
			text.WriteString(r.Message.Content)
			onDelta(Delta{Thinking: r.Message.Thinking, Text: r.Message.Content})
		}
		if r.Done {
			usage = Usage{PromptTokens: r.PromptEvalCount, OutputTokens: r.EvalCount, Generation: r.EvalDuration, DoneReason: r.DoneReason}
		}
		for _, tc := range r.Message.ToolCalls {
			args, err := json.Marshal(tc.Function.Arguments)
			if err != nil {
				args = []byte("{}")
			}
			reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: string(args)})
		}
		done = done || r.Done
		return nil
	})
	if err != nil {
		return Message{}, Usage{}, o.explain(ctx, req.Model, err)
	}
	if !done {
		// The client ends quietly when the connection drops mid-stream;
		// only the missing final chunk shows it.
		return Message{}, Usage{}, fail(ErrStream, nil, fmt.Sprintf(
			"the reply from %s broke off before it was complete (did the server stop or run out of memory?); try again", o))
	}
	reply.Role = "assistant"
	reply.Content = text.String()
	reply.Thinking = thinking.String()
	return reply, usage, nil
}

// ollamaThink is --think as Ollama's think field: a boolean for true or
// false, the level's name otherwise, nothing when it was not given.
func ollamaThink(v string) *api.ThinkValue {
	switch v {
	case "":
		return nil
	case "true", "false":
		return &api.ThinkValue{Value: v == "true"}
	}
	return &api.ThinkValue{Value: v}
}

// ThinkValues implements ThinkChecker through /api/show: a model
// without the thinking capability takes only false (every Ollama refuses
// thinking for it). Which levels a thinking model takes depends on the
// server's version (0.17 takes them only for gpt-oss, later ones for
// more), so for such a model the server judges.
func (o *Ollama) ThinkValues(ctx context.Context, name string) ([]string, error) {
	show, err := o.client.Show(ctx, &api.ShowRequest{Model: name})
	if err != nil {
		return nil, o.explainAt(ctx, "/api/show", name, err)
	}
	if len(show.Capabilities) == 0 || slices.Contains(show.Capabilities, model.CapabilityThinking) {
		return nil, nil // too old to say, or a thinking model: the server judges
	}
	return []string{"false"}, nil
}

// ToolModels implements Backend: installed models whose /api/show
// capabilities include tools, in /api/tags order (most recently modified
// first).
func (o *Ollama) ToolModels(ctx context.Context) ([]string, error) {
	list, err := o.client.List(ctx)
	if err != nil {
		return nil, o.explainAt(ctx, "/api/tags", "", err)
	}
	var out []string
	for _, m := range list.Models {
		show, err := o.client.Show(ctx, &api.ShowRequest{Model: m.Name})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if slices.Contains(show.Capabilities, model.CapabilityTools) {
			out = append(out, m.Name)
		}
	}
	if len(out) == 0 {
		what := "no model is installed"
		if len(list.Models) > 0 {
			what = "none of the installed models supports tools"
		}
		return nil, fail(ErrNoModel, nil, fmt.Sprintf(
			"%s in %s, and moat needs one that does; pull one, e.g. 'ollama pull qwen3' or 'ollama pull llama3.1'", what, o))
	}
	return out, nil
}

// CheckModel implements Backend through /api/show. A server too old to
// report capabilities is given the benefit of the doubt: /api/chat will
// still refuse a model without tools, and that is explained too.
func (o *Ollama) CheckModel(ctx context.Context, name string) error {
	show, err := o.client.Show(ctx, &api.ShowRequest{Model: name})
	if err != nil {
		return o.explainAt(ctx, "/api/show", name, err)
	}
	if len(show.Capabilities) > 0 && !slices.Contains(show.Capabilities, model.CapabilityTools) {
		return o.noTools(ctx, name, nil)
	}
	return nil
}

// explain turns what the client returned for /api/chat into a message for
// a person.
func (o *Ollama) explain(ctx context.Context, name string, err error) error {
	return o.explainAt(ctx, "/api/chat", name, err)
}

// explainAt is explain for the request to path (/api/tags, /api/show):
// a failure that is not the chat's is said to be that request's, and no
// other request's reply is called broken off.
func (o *Ollama) explainAt(ctx context.Context, path, name string, err error) error {
	chat := path == "/api/chat"
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if why, ok := unreachable(err); ok {
		return fail(ErrUnreachable, err, fmt.Sprintf(
			"cannot reach Ollama at %s: %s. moat ask/chat need a running Ollama (start it with 'ollama serve') and a model with tool support (e.g. 'ollama pull qwen3'). A server elsewhere: --host URL or OLLAMA_HOST; llama.cpp, LM Studio, vLLM: --api openai. moat tool works without a model, and moat doctor shows what is missing.", o.base, why))
	}
	var se api.StatusError
	if errors.As(err, &se) {
		switch {
		case se.StatusCode == http.StatusNotFound && name != "":
			return fail(ErrModelNotFound, err, fmt.Sprintf(
				"model %q is not installed in %s; pull it with 'ollama pull %s'%s", name, o, Sanitize(name, false), o.alternatives(ctx)))
		case se.StatusCode == http.StatusBadRequest && strings.Contains(se.ErrorMessage, "does not support tools"):
			return o.noTools(ctx, name, err)
		case se.StatusCode == http.StatusBadRequest && strings.Contains(se.ErrorMessage, "think value"):
			return fail(ErrHTTP, err, fmt.Sprintf("%s refused --think: %s; model %s takes --think true or false (this Ollama takes levels only for some models, such as gpt-oss)",
				o, Sanitize(se.ErrorMessage, false), Sanitize(name, false)))
		case se.StatusCode == http.StatusBadRequest && strings.Contains(se.ErrorMessage, "does not support thinking"):
			return fail(ErrHTTP, err, fmt.Sprintf("%s refused --think: %s; leave --think out, or give --think false",
				o, Sanitize(se.ErrorMessage, false)))
		}
		if !chat {
			return fail(ErrHTTP, err, fmt.Sprintf("%s answered HTTP %d to %s: %s", o, se.StatusCode, path, Sanitize(se.ErrorMessage, false)))
		}
		return fail(ErrHTTP, err, fmt.Sprintf("%s answered HTTP %d: %s", o, se.StatusCode, Sanitize(se.ErrorMessage, false)))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fail(ErrHTTP, err, fmt.Sprintf("talking to %s failed (%s): %v", o, path, ue.Err))
	}
	if !chat {
		// A reply that is not the JSON Ollama sends for this request
		// (another server on the port, a proxy's page).
		return fail(ErrHTTP, err, fmt.Sprintf("%s sent a reply to %s that is not Ollama's: %s (is it Ollama? an OpenAI-compatible server: --api openai)", o, path, Sanitize(err.Error(), false)))
	}
	// The client reports an {"error": ...} line inside the stream as a
	// plain error: the server failed mid-reply.
	return fail(ErrStream, err, fmt.Sprintf("%s failed in the middle of its reply: %s", o, Sanitize(err.Error(), false)))
}

func (o *Ollama) noTools(ctx context.Context, name string, err error) error {
	msg := fmt.Sprintf("model %q does not support tools, which moat needs to look at files", name)
	if names, lerr := o.ToolModels(ctx); lerr == nil {
		msg += fmt.Sprintf(". Installed models with tool support: %s (choose one with --model)", nameList(names))
	} else {
		msg += "; pull one that does, e.g. 'ollama pull qwen3' or 'ollama pull llama3.1'"
	}
	return fail(ErrNoTools, err, msg)
}

// alternatives names installed tool-capable models, best effort.
func (o *Ollama) alternatives(ctx context.Context) string {
	names, err := o.ToolModels(ctx)
	if err != nil {
		return ""
	}
	return " (installed with tool support: " + nameList(names) + ")"
}

// ollamaTools offers the catalogue's tools. The schema goes through JSON
// because that is the contract: api.ToolFunctionParameters keeps the parts
// Ollama's templates render (types, descriptions, required).
func ollamaTools(tools []*toolspec.Tool) api.Tools {
	var out api.Tools
	for _, t := range tools {
		var params api.ToolFunctionParameters
		if b, err := json.Marshal(t.Schema); err == nil {
			json.Unmarshal(b, &params)
		}
		if params.Type == "" {
			params.Type = "object"
		}
		out = append(out, api.Tool{Type: "function", Function: api.ToolFunction{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return out
}

// toOllama converts the history. Tool results carry tool_name (what every
// Ollama version reads) and tool_call_id when the call had an id (what
// newer versions match on).
func toOllama(msgs []Message) []api.Message {
	out := make([]api.Message, 0, len(msgs))
	for _, m := range msgs {
		am := api.Message{Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolName: m.ToolName, ToolCallID: m.ToolCallID}
		for i, c := range m.ToolCalls {
			args := api.NewToolCallFunctionArguments()
			if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
				args = api.NewToolCallFunctionArguments()
			}
			am.ToolCalls = append(am.ToolCalls, api.ToolCall{ID: c.ID, Function: api.ToolCallFunction{
				Index: i, Name: c.Name, Arguments: args,
			}})
		}
		out = append(out, am)
	}
	return out
}
