package scripted

// The shapes of thinking models and of models without a tool parser:
// think values checked as Ollama checks them, content with thinking in
// tags or calls written as text, and the figures a reply reports.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// thinkValue is a request's think setting: a boolean, or a level.
type thinkValue struct {
	b     bool   // true or false was given
	level string // or a level
}

func (t *thinkValue) on() bool { return t.level != "" || t.b }

// parseThink reads Ollama's think field as its ThinkValue does: true,
// false, or "high", "medium", "low".
func parseThink(raw json.RawMessage) (*thinkValue, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return &thinkValue{b: b}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "high", "medium", "low":
			return &thinkValue{level: s}, nil
		}
		return nil, fmt.Errorf("invalid think value: %q (must be \"high\", \"medium\", \"low\", true, or false)", s)
	}
	return nil, fmt.Errorf("think must be a boolean or string (\"high\", \"medium\", \"low\", true, or false)")
}

// thinks reports whether the turn's thinking is sent: not when the
// request turned thinking off, unless the model thinks anyway (gpt-oss).
func (t Turn) thinks(think *thinkValue) bool {
	return t.Thinking != "" && (think == nil || think.on() || t.alwaysThinks)
}

// content is the turn's content as the model wrote it: the thinking in
// tags first if asked, the text, and the calls if they are written as text.
func (t Turn) content(think *thinkValue) string {
	var b strings.Builder
	if t.ThinkTags && t.thinks(think) {
		b.WriteString("<think>\n" + t.Thinking + "\n</think>\n\n")
	}
	b.WriteString(t.Text)
	if t.TextCalls != "" {
		b.WriteString(textCalls(t.TextCalls, t.Calls))
	}
	return b.String()
}

// structuredCalls are the calls sent as tool calls (none when they are
// written as text).
func (t Turn) structuredCalls() []Call {
	if t.TextCalls != "" {
		return nil
	}
	return t.Calls
}

// textCalls writes calls as each family's chat template has the model
// write them: Hermes/Qwen <tool_call> blocks, Mistral's [TOOL_CALLS] list,
// Llama 3.1's <|python_tag|> JSON with "parameters", or a bare object.
func textCalls(format string, calls []Call) string {
	// name first, as the templates show the model: {"name": ..., "arguments": ...}
	obj := func(c Call, argsKey string) string {
		args := c.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		b, _ := json.Marshal(args)
		return `{"name":` + string(mustJSON(c.Name)) + `,"` + argsKey + `":` + string(b) + `}`
	}
	var parts []string
	switch format {
	case "hermes":
		for _, c := range calls {
			parts = append(parts, "<tool_call>\n"+obj(c, "arguments")+"\n</tool_call>")
		}
		return strings.Join(parts, "\n")
	case "mistral":
		for _, c := range calls {
			parts = append(parts, obj(c, "arguments"))
		}
		return "[TOOL_CALLS][" + strings.Join(parts, ", ") + "]"
	case "llama":
		for _, c := range calls {
			parts = append(parts, obj(c, "parameters"))
		}
		return "<|python_tag|>" + strings.Join(parts, "; ")
	}
	if len(calls) == 0 {
		return ""
	}
	return obj(calls[0], "arguments")
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// figures are a turn's reported counts: as scripted, or derived.
func (t Turn) figures(reqBytes, chunks int) (prompt, eval int) {
	prompt, eval = t.PromptTokens, t.EvalCount
	if prompt == 0 {
		prompt = reqBytes / 4
	}
	if eval == 0 {
		eval = max(chunks, 1)
	}
	return prompt, eval
}

// evalNS is the eval_duration reported: 20 ms a token, a steady 50
// tokens per second, so tests can check the rate moat computes.
const evalNS = 20e6
