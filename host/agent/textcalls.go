package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// TextCallFormat names a way a model writes a tool call into its content
// when the server has no parser for it (or the chat template offers no
// tools): the call then arrives as text, and moat recovers it.
type TextCallFormat string

const (
	// TextCallHermes: <tool_call>{"name": ..., "arguments": {...}}</tool_call>,
	// one block per call (Hermes, Qwen 2.5 and 3).
	TextCallHermes TextCallFormat = "hermes"
	// TextCallMistral: [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]
	// (Mistral's v3 tokenizer), or [TOOL_CALLS]name[ARGS]{...} per call
	// (v11 and later; name{...} when the special tokens are not shown).
	TextCallMistral TextCallFormat = "mistral"
	// TextCallLlama: <|python_tag|>{"name": ..., "parameters": {...}},
	// several joined by ";" (Llama 3.1-3.3 JSON tool calling).
	TextCallLlama TextCallFormat = "llama"
	// TextCallJSON: the whole reply is a JSON object naming a tool, with
	// "arguments" or "parameters" (perhaps in a ```json fence).
	TextCallJSON TextCallFormat = "json"
)

// Markers that start a call written as text, and the <think> tags some
// servers leave in the content.
const (
	hermesOpen    = "<tool_call>"
	hermesClose   = "</tool_call>"
	mistralTag    = "[TOOL_CALLS]"
	mistralArgs   = "[ARGS]"
	mistralCallID = "[CALL_ID]"
	pythonTag     = "<|python_tag|>"
	thinkOpen     = "<think>"
	thinkClose    = "</think>"
)

// Llama 3.x end-of-message tokens a server may leave in the text.
var llamaEnds = []string{"<|eom_id|>", "<|eot_id|>"}

// recoverCalls reads content that is wholly one of the text formats and
// names only tools in known. It returns nil unless the whole content is
// calls: a reply that quotes a call inside prose is an answer.
func recoverCalls(content string, known func(string) bool) ([]ToolCall, TextCallFormat) {
	s := strings.TrimSpace(content)
	var objs []json.RawMessage
	var format TextCallFormat
	switch {
	case strings.HasPrefix(s, hermesOpen):
		format = TextCallHermes
		for rest := s; rest != ""; rest = strings.TrimSpace(rest) {
			body, ok := strings.CutPrefix(rest, hermesOpen)
			if !ok {
				return nil, ""
			}
			inner, after, ok := strings.Cut(body, hermesClose)
			if !ok { // the last block may lack its end tag when generation stopped at it
				inner, after = body, ""
			}
			objs = append(objs, json.RawMessage(strings.TrimSpace(inner)))
			rest = after
		}
	case strings.HasPrefix(s, mistralTag):
		format = TextCallMistral
		body := strings.TrimSpace(strings.TrimPrefix(s, mistralTag))
		if strings.HasPrefix(body, "[") { // v3: one JSON list
			if json.Unmarshal([]byte(body), &objs) != nil {
				return nil, ""
			}
			break
		}
		// v11 and later: name[ARGS]{...} per call, each after its own
		// [TOOL_CALLS], perhaps with [CALL_ID]id before [ARGS]; decoded
		// without its special tokens, name{...}.
		for _, one := range strings.Split(body, mistralTag) {
			name, args, ok := strings.Cut(one, mistralArgs)
			if !ok {
				i := strings.IndexByte(one, '{')
				if i < 0 {
					return nil, ""
				}
				name, args = one[:i], one[i:]
			}
			name, _, _ = strings.Cut(name, mistralCallID)
			b, _ := json.Marshal(map[string]json.RawMessage{"name": mustString(strings.TrimSpace(name)), "arguments": json.RawMessage(strings.TrimSpace(args))})
			objs = append(objs, b)
		}
	case strings.HasPrefix(s, pythonTag):
		format = TextCallLlama
		body := strings.TrimPrefix(s, pythonTag)
		for _, end := range llamaEnds {
			body = strings.TrimSuffix(strings.TrimSpace(body), end)
		}
		for body = strings.TrimSpace(body); body != ""; {
			dec := json.NewDecoder(strings.NewReader(body))
			var o json.RawMessage
			if dec.Decode(&o) != nil {
				return nil, ""
			}
			objs = append(objs, o)
			body = strings.TrimLeft(body[dec.InputOffset():], space)
			if body == "" {
				break
			}
			if body[0] != ';' { // calls are joined by ";"
				return nil, ""
			}
			body = strings.TrimLeft(body[1:], space)
		}
	default:
		format = TextCallJSON
		if f, ok := strings.CutPrefix(s, "```json"); ok {
			f, ok = strings.CutSuffix(strings.TrimSpace(f), "```")
			if !ok {
				return nil, ""
			}
			s = strings.TrimSpace(f)
		}
		if !strings.HasPrefix(s, "{") {
			return nil, ""
		}
		objs = []json.RawMessage{json.RawMessage(s)}
	}
	if len(objs) == 0 {
		return nil, ""
	}
	calls := make([]ToolCall, 0, len(objs))
	for _, o := range objs {
		c, ok := parseTextCall(o)
		if !ok || !known(c.Name) {
			return nil, ""
		}
		calls = append(calls, c)
	}
	return calls, format
}

func mustString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// parseTextCall reads {"name": ..., "arguments"|"parameters": {...}}. The
// arguments may also be a string holding the object, as some models write
// them (the OpenAI wire form copied into text).
func parseTextCall(o json.RawMessage) (ToolCall, bool) {
	var c struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	dec := json.NewDecoder(bytes.NewReader(o))
	if dec.Decode(&c) != nil || dec.More() || c.Name == "" {
		return ToolCall{}, false
	}
	args := c.Arguments
	if len(args) == 0 {
		args = c.Parameters
	}
	var str string
	if json.Unmarshal(args, &str) == nil {
		args = json.RawMessage(str)
	}
	var obj map[string]json.RawMessage
	switch {
	case len(bytes.TrimSpace(args)) == 0 || string(args) == "null":
		args = json.RawMessage("{}")
	case json.Unmarshal(args, &obj) != nil:
		return ToolCall{}, false // not an object: not a call moat could run
	}
	var b bytes.Buffer
	if json.Compact(&b, args) == nil {
		args = b.Bytes()
	}
	return ToolCall{Name: c.Name, Arguments: string(args)}, true
}

// callPrefixes are how a reply that may be a call written as text starts;
// the content filter holds such text back instead of streaming it.
var callPrefixes = []string{hermesOpen, mistralTag, pythonTag, "{", "```json"}

// contentFilter sits between a backend's text deltas and the terminal: it
// moves a leading <think>...</think> block to thinking, and holds back a
// reply that starts like a call written as text until the reply is over,
// so a recovered call is never printed as if it were the answer.
type contentFilter struct {
	onThinking func(string)
	onText     func(string)

	state   int             // filterStart, filterThink, filterHold, filterPass
	buf     strings.Builder // undecided or held text
	content strings.Builder // the reply's content, think block removed
	think   strings.Builder // thinking taken from the tags
}

const (
	filterStart = iota // nothing but blank space yet
	filterThink        // inside <think>
	filterHold         // may be a call: held
	filterPass         // plain text: streamed
)

func (f *contentFilter) write(p string) {
	for p != "" {
		switch f.state {
		case filterPass:
			f.content.WriteString(p)
			f.onText(p)
			return
		case filterHold:
			f.content.WriteString(p)
			f.buf.WriteString(p)
			return
		case filterThink:
			f.buf.WriteString(p)
			p = ""
			s := f.buf.String()
			if i := strings.Index(s, thinkClose); i >= 0 {
				f.thinking(s[:i])
				f.buf.Reset()
				f.state, p = filterStart, s[i+len(thinkClose):]
				continue
			}
			// stream all but what could be the start of </think>
			keep := partialSuffix(s, thinkClose)
			f.thinking(s[:len(s)-keep])
			f.buf.Reset()
			f.buf.WriteString(s[len(s)-keep:])
		case filterStart:
			f.buf.WriteString(p)
			p = ""
			s := f.buf.String()
			t := strings.TrimLeft(s, space)
			switch {
			case t == "":
				continue
			case strings.HasPrefix(t, thinkOpen) && f.think.Len() == 0:
				f.buf.Reset()
				f.state, p = filterThink, t[len(thinkOpen):]
			case isPrefixOfAny(t, thinkOpen) && f.think.Len() == 0:
				// wait for more
			case startsCall(t):
				f.buf.Reset()
				f.state = filterHold
				p = t
			case isPrefixOfAny(t, callPrefixes...):
				// wait for more
			default:
				f.buf.Reset()
				f.state, p = filterPass, t
			}
		}
	}
}

func (f *contentFilter) thinking(s string) {
	if s != "" {
		f.think.WriteString(s)
		f.onThinking(s)
	}
}

// finish ends the reply. It returns the content with any think block
// taken out, the thinking found in tags, and the text held back (which
// the caller streams unless it was a call).
func (f *contentFilter) finish() (content, thinking, held string) {
	switch f.state {
	case filterThink: // never closed: all of it was thinking
		f.thinking(f.buf.String())
	case filterStart:
		held = strings.TrimLeft(f.buf.String(), space)
		f.content.WriteString(held)
	case filterHold:
		held = f.content.String()
	case filterPass:
		// A template that opens <think> itself (deepseek-r1 distills) has
		// the model write only the closing tag. That is known only now:
		// the text has streamed, but the answer and the history are kept
		// without the thinking.
		if c := f.content.String(); f.think.Len() == 0 {
			if i := strings.Index(c, thinkClose); i >= 0 {
				return strings.TrimLeft(c[i+len(thinkClose):], space), c[:i], ""
			}
		}
	}
	return f.content.String(), f.think.String(), held
}

func startsCall(t string) bool {
	for _, p := range callPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// isPrefixOfAny reports whether t could still become one of the markers.
func isPrefixOfAny(t string, marks ...string) bool {
	for _, m := range marks {
		if len(t) < len(m) && strings.HasPrefix(m, t) {
			return true
		}
	}
	return false
}

// partialSuffix is the length of the longest end of s that begins mark.
func partialSuffix(s, mark string) int {
	for n := min(len(mark)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, mark[:n]) {
			return n
		}
	}
	return 0
}

// recoveredNote is the activity line that tells the person a call was
// read from text.
func recoveredNote(f TextCallFormat, n int) string {
	what := "a tool call"
	if n > 1 {
		what = fmt.Sprintf("%d tool calls", n)
	}
	return fmt.Sprintf("moat: the model wrote %s as text (%s format); running it as a call", what, f)
}
