package agent

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/moatdev/moat/host/toolspec"
)

// OpenAI speaks the OpenAI-compatible chat API (/v1/chat/completions with
// server-sent events), as Ollama, llama.cpp's server, LM Studio and vLLM
// offer it. Tool-call arguments arrive as a JSON string, often split over
// many chunks; results go back matched by tool_call_id.
type OpenAI struct {
	base *url.URL // without the /v1 suffix
	hc   *http.Client
}

// maxSSELine bounds one server-sent event line: a whole tool call's
// arguments can arrive in one line.
const maxSSELine = 8 << 20

// NewOpenAI returns a backend for the server at base ("http://host:port"
// or ".../v1"). hc may be nil.
func NewOpenAI(base *url.URL, hc *http.Client) *OpenAI {
	if hc == nil {
		hc = http.DefaultClient
	}
	b := *base
	b.Path = strings.TrimSuffix(strings.TrimSuffix(b.Path, "/"), "/v1")
	return &OpenAI{base: &b, hc: hc}
}

func (o *OpenAI) String() string { return "the OpenAI-compatible server at " + o.base.String() }

func (o *OpenAI) endpoint(p string) string { return o.base.JoinPath("v1", p).String() }

type oaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Thinking sent back, under both names servers read: reasoning_content
	// (llama.cpp, vLLM, DeepSeek) and reasoning (Ollama).
	ReasoningContent string       `json:"reasoning_content,omitempty"`
	Reasoning        string       `json:"reasoning,omitempty"`
	ToolCalls        []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Parameters  any    `json:"parameters"`
	} `json:"function"`
}

type oaRequest struct {
	Model         string      `json:"model"`
	Messages      []oaMessage `json:"messages"`
	Tools         []oaTool    `json:"tools,omitempty"`
	Stream        bool        `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"` // usage in the last event, with no choices
	} `json:"stream_options"`
	// --think: a level goes as reasoning_effort (OpenAI's name, which
	// Ollama maps to its think levels and llama.cpp hands to the chat
	// template); true or false as the template's enable_thinking
	// (llama.cpp's server, vLLM), false also as reasoning_effort "none"
	// (which turns thinking off in Ollama and llama.cpp alike).
	ReasoningEffort    string         `json:"reasoning_effort,omitempty"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
}

type oaChunk struct {
	Choices []struct {
		Delta struct {
			Content          string       `json:"content"`
			ReasoningContent string       `json:"reasoning_content"` // llama.cpp, vLLM, DeepSeek
			Reasoning        string       `json:"reasoning"`         // Ollama, newer vLLM
			ToolCalls        []oaToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	// Timings is llama.cpp's server's own measure, in its last event.
	Timings *struct {
		PredictedN  int     `json:"predicted_n"`
		PredictedMS float64 `json:"predicted_ms"`
	} `json:"timings"`
	Error json.RawMessage `json:"error"`
}

// Chat implements Backend. The API has no num_ctx: the server's own
// context setting applies, and the session still keeps within NumCtx.
func (o *OpenAI) Chat(ctx context.Context, req Request, onDelta func(Delta)) (Message, Usage, error) {
	oreq := oaRequest{Model: req.Model, Messages: toOpenAI(req.Messages), Tools: openAITools(req.Tools), Stream: true}
	oreq.StreamOptions.IncludeUsage = true
	switch req.Think {
	case "":
	case "true", "false":
		oreq.ChatTemplateKwargs = map[string]any{"enable_thinking": req.Think == "true"}
		if req.Think == "false" {
			oreq.ReasoningEffort = "none"
		}
	default:
		oreq.ReasoningEffort = req.Think
	}
	body, err := json.Marshal(oreq)
	if err != nil {
		return Message{}, Usage{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint("chat/completions"), bytes.NewReader(body))
	if err != nil {
		return Message{}, Usage{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	resp, err := o.hc.Do(hreq)
	if err != nil {
		return Message{}, Usage{}, o.explain(ctx, req.Model, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return Message{}, Usage{}, o.statusError(ctx, req.Model, req.Think, resp)
	}

	var text, thinking strings.Builder
	var usage Usage
	calls := map[int]*ToolCall{}
	done := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSELine)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // comments, event names, blank separators
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var ch oaChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return Message{}, Usage{}, fail(ErrStream, err, fmt.Sprintf("%s sent a malformed stream chunk: %v", o, err))
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" {
			return Message{}, Usage{}, fail(ErrStream, nil, fmt.Sprintf("%s failed in the middle of its reply: %s", o, Sanitize(errorText(ch.Error), false)))
		}
		if ch.Usage != nil {
			usage.PromptTokens, usage.OutputTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
		}
		if ch.Timings != nil && ch.Timings.PredictedMS > 0 {
			usage.Generation = time.Duration(ch.Timings.PredictedMS * float64(time.Millisecond))
			if usage.OutputTokens == 0 {
				usage.OutputTokens = ch.Timings.PredictedN
			}
		}
		for _, c := range ch.Choices {
			// One of the two names: a server in transition from one to
			// the other may send the same text under both.
			th := cmp.Or(c.Delta.ReasoningContent, c.Delta.Reasoning)
			if th != "" || c.Delta.Content != "" {
				thinking.WriteString(th)
				text.WriteString(c.Delta.Content)
				onDelta(Delta{Thinking: th, Text: c.Delta.Content})
			}
			for _, d := range c.Delta.ToolCalls {
				i := len(calls)
				if d.Index != nil {
					i = *d.Index
				}
				tc := calls[i]
				if tc == nil {
					tc = &ToolCall{}
					calls[i] = tc
				}
				if d.ID != "" {
					tc.ID = d.ID
				}
				if tc.Name == "" {
					tc.Name = d.Function.Name
				}
				tc.Arguments += d.Function.Arguments
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				done = true
				usage.DoneReason = *c.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return Message{}, Usage{}, fail(ErrStream, err, fmt.Sprintf("the reply from %s broke off: %v", o, err))
	}
	if ctx.Err() != nil {
		return Message{}, Usage{}, ctx.Err()
	}
	if !done {
		return Message{}, Usage{}, fail(ErrStream, nil, fmt.Sprintf(
			"the reply from %s broke off before it was complete (did the server stop or fail? Ollama's OpenAI-compatible layer drops the error of a reply that fails part way, which --api ollama shows); try again", o))
	}
	reply := Message{Role: "assistant", Content: text.String(), Thinking: thinking.String()}
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for n, i := range idx {
		tc := *calls[i]
		if tc.ID == "" {
			// Results are matched by id only; a server that sent none
			// gets one that is unique within the reply.
			tc.ID = fmt.Sprintf("call_%d", n)
		}
		reply.ToolCalls = append(reply.ToolCalls, tc)
	}
	return reply, usage, nil
}

// ToolModels implements Backend: the API cannot tell which models call
// tools, so all listed models are returned, in the server's order.
func (o *OpenAI) ToolModels(ctx context.Context) ([]string, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, o.endpoint("models"), nil)
	if err != nil {
		return nil, err
	}
	resp, err := o.hc.Do(hreq)
	if err != nil {
		return nil, o.explain(ctx, "", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, o.statusError(ctx, "", "", resp)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSSELine)).Decode(&list); err != nil {
		return nil, fail(ErrHTTP, err, fmt.Sprintf("%s sent a model list moat cannot read: %v", o, err))
	}
	var out []string
	for _, m := range list.Data {
		out = append(out, m.ID)
	}
	if len(out) == 0 {
		return nil, fail(ErrNoModel, nil, fmt.Sprintf("%s lists no models; load one, or name it with --model", o))
	}
	return out, nil
}

// CheckModel implements Backend. The API cannot say whether a model calls
// tools, and some servers load models not listed, so this only checks that
// the server answers.
func (o *OpenAI) CheckModel(ctx context.Context, name string) error {
	_, err := o.ToolModels(ctx)
	if errors.Is(err, ErrNoModel) {
		return nil
	}
	return err
}

func (o *OpenAI) explain(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if why, ok := unreachable(err); ok {
		return fail(ErrUnreachable, err, fmt.Sprintf(
			"cannot reach %s: %s. Is the server running? (For Ollama's own API use --api ollama.)", o, why))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fail(ErrHTTP, err, fmt.Sprintf("talking to %s failed: %v", o, err))
}

// statusError explains an error answer to a request for model name (""
// for none) sent with --think think ("" for none).
func (o *OpenAI) statusError(ctx context.Context, name, think string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 {
		msg = errorText(e.Error)
	}
	msg = Sanitize(msg, false)
	switch {
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
		out := fmt.Sprintf("model %q does not support tools, which moat needs to look at files (%s said: %s)", name, o, msg)
		if names, err := o.ToolModels(ctx); err == nil {
			out += ". Models it lists: " + nameList(names) + " (choose one with --model)"
		}
		return fail(ErrNoTools, nil, out)
	case resp.StatusCode == http.StatusBadRequest && think != "":
		// This API lists no capabilities, so --think could not be checked
		// before the request: the server's refusal is where it is.
		if advice, ok := thinkAdvice(msg); ok {
			return fail(ErrHTTP, nil, fmt.Sprintf("%s refused --think %s: %s; %s", o, think, msg, advice))
		}
	case resp.StatusCode == http.StatusNotFound && name != "":
		out := fmt.Sprintf("%s has no model %q (%s)", o, name, msg)
		if names, err := o.ToolModels(ctx); err == nil {
			out += "; it lists: " + nameList(names)
		}
		return fail(ErrModelNotFound, nil, out+". With Ollama, pull it first: 'ollama pull "+name+"'")
	}
	return fail(ErrHTTP, nil, fmt.Sprintf("%s answered HTTP %d: %s", o, resp.StatusCode, msg))
}

// thinkAdvice says what to give instead when msg, a server's refusal of a
// request sent with --think, is about thinking: Ollama's three refusals
// (thinking on a model without it, a level the model does not take, a
// level it does not know), or any other naming thinking or reasoning.
func thinkAdvice(msg string) (string, bool) {
	switch low := strings.ToLower(msg); {
	case strings.Contains(low, "does not support thinking"):
		return "leave --think out, or give --think false", true
	case strings.Contains(low, "think value"):
		return "give --think true or false, or leave it out", true
	case strings.Contains(low, "invalid reasoning value"):
		return "give one of those, or leave --think out", true
	case strings.Contains(low, "think") || strings.Contains(low, "reasoning"):
		return "leave --think out, or give another value", true
	}
	return "", false
}

// errorText reads an OpenAI error: {"message": ...} or a bare string.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	return string(raw)
}

func openAITools(tools []*toolspec.Tool) []oaTool {
	var out []oaTool
	for _, t := range tools {
		var ot oaTool
		ot.Type = "function"
		ot.Function.Name = t.Name
		ot.Function.Description = t.Description
		ot.Function.Parameters = t.Schema
		out = append(out, ot)
	}
	return out
}

func toOpenAI(msgs []Message) []oaMessage {
	out := make([]oaMessage, 0, len(msgs))
	for _, m := range msgs {
		om := oaMessage{Role: m.Role, Content: m.Content, ReasoningContent: m.Thinking, Reasoning: m.Thinking, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			var tc oaToolCall
			tc.ID, tc.Type = c.ID, "function"
			tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
			om.ToolCalls = append(om.ToolCalls, tc)
		}
		out = append(out, om)
	}
	return out
}
