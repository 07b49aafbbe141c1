package scripted

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

type oaDelta struct {
	Role             string       `json:"role,omitempty"`
	Content          *string      `json:"content,omitempty"`
	Reasoning        string       `json:"reasoning,omitempty"`         // Ollama
	ReasoningContent string       `json:"reasoning_content,omitempty"` // llama.cpp`
	ToolCalls        []oaToolCall `json:"tool_calls,omitempty"`
}

type oaToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaChoice struct {
	Index        int     `json:"index"`
	Delta        oaDelta `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type oaChunk struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Created           int64      `json:"created"`
	Model             string     `json:"model"`
	SystemFingerprint string     `json:"system_fingerprint"`
	Choices           []oaChoice `json:"choices"`
	Usage             *oaUsage   `json:"usage,omitempty"`
	Timings           *oaTimings `json:"timings,omitempty"` // llama.cpp
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// oaTimings is llama.cpp's server's measure of a reply.
type oaTimings struct {
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PromptPerSecond    float64 `json:"prompt_per_second"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

func oaError(w http.ResponseWriter, code int, msg string) {
	typ := "api_error"
	switch code {
	case 400:
		typ = "invalid_request_error"
	case 404:
		typ = "not_found_error"
	}
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

// openAIChat answers /v1/chat/completions with stream true as server-sent
// events: reasoning deltas, text deltas, tool calls whose arguments string
// is split over several chunks, a finish_reason, the usage if
// stream_options.include_usage asked for it, then [DONE].
func (f *Server) openAIChat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model         string            `json:"model"`
		Tools         []json.RawMessage `json:"tools"`
		Stream        bool              `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		ReasoningEffort    *string `json:"reasoning_effort"`
		ChatTemplateKwargs struct {
			EnableThinking *bool `json:"enable_thinking"`
		} `json:"chat_template_kwargs"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		oaError(w, 400, err.Error())
		return
	}
	llamacpp := f.script.OpenAI == "llamacpp"
	// Both read reasoning_effort: "none" turns thinking off; a level is
	// checked by Ollama, handed to the chat template by llama.cpp, whose
	// templates also read chat_template_kwargs.enable_thinking.
	var think *thinkValue
	switch {
	case llamacpp && req.ReasoningEffort != nil && *req.ReasoningEffort == "none":
		think = &thinkValue{}
	case llamacpp && req.ChatTemplateKwargs.EnableThinking != nil:
		think = &thinkValue{b: *req.ChatTemplateKwargs.EnableThinking}
	case llamacpp && req.ReasoningEffort != nil && *req.ReasoningEffort != "":
		think = &thinkValue{level: *req.ReasoningEffort}
	case !llamacpp && req.ReasoningEffort != nil && *req.ReasoningEffort != "":
		switch e := *req.ReasoningEffort; e {
		case "none":
			think = &thinkValue{}
		case "high", "medium", "low":
			think = &thinkValue{level: e}
		default:
			oaError(w, 400, fmt.Sprintf("invalid reasoning value: '%s' (must be \"high\", \"medium\", \"low\", or \"none\")", e))
			return
		}
	}
	checked := think
	if llamacpp {
		checked = nil // no capability checks: the template decides
	}
	code, t, n, msg := f.turn(req.Model, len(req.Tools) > 0, checked)
	if code != 0 {
		oaError(w, code, msg)
		return
	}
	if !f.load(r, t) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	id := fmt.Sprintf("chatcmpl-%d", n)
	chunksSent := 0
	ended := false // the stream ended early, cleanly, without [DONE]
	sendRaw := func(data string) {
		if ended {
			return
		}
		f.pace(r, t, chunksSent)
		chunksSent++
		fmt.Fprintf(w, "data: %s\n\n", data)
		if fl != nil {
			fl.Flush()
		}
	}
	send := func(d oaDelta, finish *string) {
		b, _ := json.Marshal(oaChunk{ID: id, Object: "chat.completion.chunk", Created: time.Now().Unix(), Model: req.Model,
			SystemFingerprint: "fp_ollama", Choices: []oaChoice{{Delta: d, FinishReason: finish}}})
		sendRaw(string(b))
	}
	sent := 0
	afterFirst := func() {
		sent++
		if sent != 1 {
			return
		}
		switch t.Fail {
		case "drop":
			panic(http.ErrAbortHandler)
		case "error":
			if !llamacpp {
				// Ollama's compatibility layer turns the error into a
				// chunk with nothing in it (not even the model's name),
				// then ends the stream as if it were complete.
				empty := ""
				b, _ := json.Marshal(oaChunk{ID: id, Object: "chat.completion.chunk", Created: time.Now().Unix(),
					SystemFingerprint: "fp_ollama", Choices: []oaChoice{{Delta: oaDelta{Role: "assistant", Content: &empty}}}})
				sendRaw(string(b))
				ended = true
				return
			}
			sendRaw(`{"error":{"message":"fakellm: simulated failure mid-stream","type":"api_error"}}`)
			panic(http.ErrAbortHandler)
		case "hang":
			f.stall(r)
		}
	}
	if t.thinks(think) && !t.ThinkTags {
		for _, p := range chunks(t.Thinking, textChunk) {
			d := oaDelta{Role: "assistant"}
			if llamacpp {
				d.ReasoningContent = p
			} else {
				empty := ""
				d.Content, d.Reasoning = &empty, p // Ollama sends "content":"" beside it
			}
			send(d, nil)
			afterFirst()
		}
	}
	for _, p := range chunks(t.content(think), textChunk) {
		send(oaDelta{Role: "assistant", Content: &p}, nil)
		afterFirst()
	}
	var atEnd []oaToolCall // gpt-oss's, in the finish chunk (see nativeChat)
	for i, call := range t.structuredCalls() {
		args := string(call.Args)
		if call.RawArgs != nil {
			args = *call.RawArgs
		} else if args == "" {
			args = "{}"
		}
		var head oaToolCall
		head.Index, head.ID, head.Type = i, t.callID(n, i), "function"
		head.Function.Name = call.Name
		if !llamacpp {
			// Ollama: the whole call in one delta, arguments and all.
			empty := ""
			head.Function.Arguments = args
			if t.alwaysThinks {
				atEnd = append(atEnd, head)
				continue
			}
			send(oaDelta{Role: "assistant", Content: &empty, ToolCalls: []oaToolCall{head}}, nil)
			afterFirst()
			continue
		}
		// llama.cpp (and vLLM): the name first, then the arguments
		// string a few characters a delta.
		send(oaDelta{Role: "assistant", ToolCalls: []oaToolCall{head}}, nil)
		afterFirst()
		for _, p := range chunks(args, argsChunk) {
			var tc oaToolCall
			tc.Index = i
			tc.Function.Arguments = p
			send(oaDelta{ToolCalls: []oaToolCall{tc}}, nil)
		}
	}
	if sent == 0 {
		afterFirst()
	}
	finish := cmp.Or(t.DoneReason, "stop")
	if len(t.structuredCalls()) > 0 && (!llamacpp || finish == "stop") {
		// Ollama says tool_calls whenever the reply has a call, even one
		// cut off at a limit.
		finish = "tool_calls"
	}
	prompt, eval := t.figures(len(body), sent)
	usage := &oaUsage{PromptTokens: prompt, CompletionTokens: eval, TotalTokens: prompt + eval}
	last := oaDelta{}
	if !llamacpp {
		empty := ""
		last = oaDelta{Role: "assistant", Content: &empty, ToolCalls: atEnd} // Ollama's final delta has both
	}
	final := oaChunk{ID: id, Object: "chat.completion.chunk", Created: time.Now().Unix(), Model: req.Model,
		SystemFingerprint: "fp_ollama", Choices: []oaChoice{{Delta: last, FinishReason: &finish}}}
	wantUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	b, _ := json.Marshal(final)
	sendRaw(string(b))
	// The figures come in an event of their own with no choices: Ollama's
	// usage only when include_usage asks; llama.cpp's timings always (its
	// server README), with the usage when asked.
	final.Choices = []oaChoice{}
	if wantUsage {
		final.Usage = usage
	}
	if llamacpp {
		ms := float64(eval) * evalNS / 1e6
		final.Timings = &oaTimings{PromptN: prompt, PromptMS: float64(prompt), PromptPerSecond: 1000,
			PredictedN: eval, PredictedMS: ms, PredictedPerSecond: float64(eval) / (ms / 1000)}
	}
	if final.Usage != nil || final.Timings != nil {
		b, _ := json.Marshal(final)
		sendRaw(string(b))
	}
	sendRaw("[DONE]")
}
