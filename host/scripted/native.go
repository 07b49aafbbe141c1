package scripted

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

type nativeMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	ToolCalls []nativeToolCall `json:"tool_calls,omitempty"`
}

type nativeToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type nativeChunk struct {
	Model      string        `json:"model"`
	CreatedAt  time.Time     `json:"created_at"`
	Message    nativeMessage `json:"message"`
	Done       bool          `json:"done"`
	DoneReason string        `json:"done_reason,omitempty"`
	// Metrics, as the final chunk carries them (api.Metrics).
	TotalDuration      int64 `json:"total_duration,omitempty"`
	LoadDuration       int64 `json:"load_duration,omitempty"`
	PromptEvalCount    int   `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64 `json:"prompt_eval_duration,omitempty"`
	EvalCount          int   `json:"eval_count,omitempty"`
	EvalDuration       int64 `json:"eval_duration,omitempty"`
}

// nativeChat answers /api/chat as Ollama does with stream true: NDJSON,
// thinking (message.thinking) then content in small chunks, each tool
// call whole in one chunk, a final chunk with done true and the figures.
func (f *Server) nativeChat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string            `json:"model"`
		Tools  []json.RawMessage `json:"tools"`
		Stream *bool             `json:"stream"`
		Think  json.RawMessage   `json:"think"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, map[string]string{"error": err.Error()})
		return
	}
	think, err := parseThink(req.Think)
	if err != nil {
		writeJSON(w, 400, map[string]string{"error": err.Error()})
		return
	}
	code, t, n, msg := f.turn(req.Model, len(req.Tools) > 0, think)
	if code != 0 {
		writeJSON(w, code, map[string]string{"error": msg})
		return
	}
	if !f.load(r, t) {
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(200)
	enc := json.NewEncoder(w)
	fl, _ := w.(http.Flusher)
	chunksSent := 0
	send := func(v any) {
		f.pace(r, t, chunksSent)
		chunksSent++
		enc.Encode(v)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func() nativeChunk {
		return nativeChunk{Model: req.Model, CreatedAt: time.Now().UTC(), Message: nativeMessage{Role: "assistant"}}
	}
	sent := 0
	afterFirst := func() {
		sent++
		if sent != 1 {
			return
		}
		switch t.Fail {
		case "drop":
			panic(http.ErrAbortHandler) // the connection is cut: no final chunk
		case "error":
			send(map[string]string{"error": "fakellm: simulated failure mid-stream"})
			panic(http.ErrAbortHandler)
		case "hang":
			f.stall(r)
		}
	}
	// Thinking first, then the content, in chunks of their own: Ollama
	// 0.17's parsers (template-driven and built-in alike) never put the
	// end of the thinking and the start of the content in one chunk.
	var thought []string
	if t.thinks(think) && !t.ThinkTags {
		thought = chunks(t.Thinking, textChunk)
	}
	text := chunks(t.content(think), textChunk)
	for _, p := range thought {
		c := chunk()
		c.Message.Thinking = p
		send(c)
		afterFirst()
	}
	for _, p := range text {
		c := chunk()
		c.Message.Content = p
		send(c)
		afterFirst()
	}
	// gpt-oss's call ends at <|call|>, a stop token, so Ollama's harmony
	// parser hands it on only when the reply ends: in the final chunk.
	var atEnd []nativeToolCall
	for i, call := range t.structuredCalls() {
		c := chunk()
		var tc nativeToolCall
		tc.ID = t.callID(n, i)
		tc.Function.Index = i
		tc.Function.Name = call.Name
		tc.Function.Arguments = call.Args
		if len(tc.Function.Arguments) == 0 {
			tc.Function.Arguments = json.RawMessage("{}")
		}
		if t.alwaysThinks {
			atEnd = append(atEnd, tc)
			continue
		}
		c.Message.ToolCalls = []nativeToolCall{tc}
		send(c)
		afterFirst()
	}
	if sent == 0 {
		afterFirst() // a failure scripted for an empty reply still happens
	}
	c := chunk()
	c.Message.ToolCalls = atEnd
	c.Done, c.DoneReason = true, cmp.Or(t.DoneReason, "stop")
	c.PromptEvalCount, c.EvalCount = t.figures(len(body), sent)
	c.PromptEvalDuration, c.EvalDuration = int64(c.PromptEvalCount)*1e6, int64(c.EvalCount)*evalNS
	c.LoadDuration = 1e6
	c.TotalDuration = c.LoadDuration + c.PromptEvalDuration + c.EvalDuration
	send(c)
}
