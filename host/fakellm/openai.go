package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

type oaDelta struct {
	Role      string       `json:"role,omitempty"`
	Content   *string      `json:"content,omitempty"`
	ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
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
// events: text deltas, tool calls whose arguments string is split over
// several chunks, a finish_reason, then [DONE].
func (f *Server) openAIChat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string            `json:"model"`
		Tools  []json.RawMessage `json:"tools"`
		Stream bool              `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		oaError(w, 400, err.Error())
		return
	}
	code, t, n, msg := f.turn(req.Model, len(req.Tools) > 0)
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
	sendRaw := func(data string) {
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
			sendRaw(`{"error":{"message":"fakellm: simulated failure mid-stream","type":"api_error"}}`)
			panic(http.ErrAbortHandler)
		case "hang":
			f.stall(r)
		}
	}
	for _, p := range chunks(t.Text, textChunk) {
		send(oaDelta{Role: "assistant", Content: &p}, nil)
		afterFirst()
	}
	for i, call := range t.Calls {
		args := string(call.Args)
		if call.RawArgs != nil {
			args = *call.RawArgs
		} else if args == "" {
			args = "{}"
		}
		var head oaToolCall
		head.Index, head.ID, head.Type = i, t.callID(n, i), "function"
		head.Function.Name = call.Name
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
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	send(oaDelta{}, &finish)
	sendRaw("[DONE]")
}
