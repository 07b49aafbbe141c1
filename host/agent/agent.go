// Package agent is the conversation loop between a model and moat's tools:
// send the conversation, stream the reply, run each tool call through the
// engine, send the results back, and repeat until the model answers or the
// turn cap stops it.
//
// The model is an untrusted planner and everything it writes is input: a
// call with malformed arguments, an unknown tool or a path outside the
// sandbox becomes an error result the model can read, never a crash. Text
// from the model or from files is escaped before it reaches the terminal.
//
// Two wire formats are spoken through [Backend]: Ollama's native /api/chat
// ([Ollama], through the official client) and the OpenAI-compatible
// /v1/chat/completions ([OpenAI]) that llama.cpp's server, LM Studio, vLLM
// and Ollama itself offer.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/moatdev/moat/host/toolspec"
)

// Dispatcher runs tool calls; *engine.Engine is one. Call must turn every
// failure into an error Result.
type Dispatcher interface {
	Tools() []*toolspec.Tool
	Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result
}

// Message is one message of the conversation, independent of the wire
// format. It is also the line format of the transcript.
type Message struct {
	Role       string     `json:"role"` // system, user, assistant or tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`    // role tool: the tool that ran
	ToolCallID string     `json:"tool_call_id,omitempty"` // role tool: the call it answers
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is the text of the arguments as the model sent them,
	// normally a JSON object. It is untrusted: the engine validates it.
	Arguments string `json:"arguments"`
}

// Request is one round trip to the model.
type Request struct {
	Model    string
	Messages []Message
	Tools    []*toolspec.Tool
	NumCtx   int
}

// Backend speaks one wire format to one server.
type Backend interface {
	// Chat sends the conversation and returns the model's whole reply,
	// calling onText with each piece of text as it streams in. A reply
	// that ends before the server says it is complete is an error.
	Chat(ctx context.Context, req Request, onText func(string)) (Message, error)
	// ToolModels lists the installed models that can call tools, best
	// first (a server that cannot tell lists all its models).
	ToolModels(ctx context.Context) ([]string, error)
	// CheckModel fails with ErrModelNotFound or ErrNoTools when the server
	// can tell before the first request, and with ErrUnreachable when it
	// cannot be reached.
	CheckModel(ctx context.Context, model string) error
	// String names the server for messages: "Ollama at http://...".
	String() string
}

// Config configures a Session.
type Config struct {
	Backend  Backend
	Tools    Dispatcher
	Model    string
	System   string // the system prompt; "" means SystemPrompt
	MaxTurns int    // model replies per question; 0 means DefaultMaxTurns
	NumCtx   int    // context window in tokens; 0 means 8192
	// ReplyTimeout bounds each model reply, from request to last chunk;
	// 0 means no bound beyond the caller's context.
	ReplyTimeout time.Duration
	// Activity gets one line per tool call; nil discards them.
	Activity io.Writer
	// Stream gets the model's text as it arrives, escaped for a terminal,
	// each reply trimmed of blank space at both ends and ended with one
	// newline; nil: nothing is streamed and only Ask's return value has the
	// answer.
	Stream io.Writer
	// Width, if positive, wraps the streamed text at spaces to lines of at
	// most this many columns (a terminal's width).
	Width int
	// Waiting is started whenever the loop waits for a reply and stopped
	// when its first text arrives or the reply ends, before anything else
	// is written; nil shows nothing.
	Waiting Waiting
	// Transcript gets every message exchanged as one JSON object per line;
	// nil: none is written.
	Transcript io.Writer
}

// Defaults for Config.
const (
	DefaultMaxTurns = 30 // a model exploring a real repository takes 10-30 calls
	DefaultNumCtx   = 8192
)

// Session is one conversation: the history grows with every question.
// A Session is not safe for concurrent use.
type Session struct {
	cfg     Config
	history []Message
	tools   []*toolspec.Tool
	stream  *streamSanitizer
	trErr   error
	// Proposals and approved writes during the latest Ask.
	proposed, written int
}

// New starts a conversation with the system prompt.
func New(cfg Config) *Session {
	if cfg.System == "" {
		cfg.System = SystemPrompt
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.NumCtx <= 0 {
		cfg.NumCtx = DefaultNumCtx
	}
	if cfg.Activity == nil {
		cfg.Activity = io.Discard
	}
	s := &Session{cfg: cfg, tools: cfg.Tools.Tools()}
	if cfg.Stream != nil {
		s.stream = &streamSanitizer{w: cfg.Stream, wrap: wrapper{width: cfg.Width}}
		if cfg.Waiting != nil {
			s.stream.before = cfg.Waiting.Stop
		}
	}
	s.add(Message{Role: "system", Content: cfg.System})
	return s
}

// Clear starts the conversation over: only the system prompt is kept. A
// transcript gets the system prompt again, which marks the new start.
func (s *Session) Clear() {
	s.history = nil
	s.proposed, s.written = 0, 0
	s.add(Message{Role: "system", Content: s.cfg.System})
}

// Tools returns the tools the model is offered.
func (s *Session) Tools() []*toolspec.Tool { return append([]*toolspec.Tool(nil), s.tools...) }

// SetWidth changes the width streamed text is wrapped to (the terminal was
// resized); 0 stops wrapping.
func (s *Session) SetWidth(n int) {
	if s.stream != nil {
		s.stream.wrap.width = max(n, 0)
	}
}

// History returns the conversation so far, as recorded (tool results as
// they were sent, before any context-budget elision).
func (s *Session) History() []Message { return append([]Message(nil), s.history...) }

func (s *Session) add(m Message) {
	s.history = append(s.history, m)
	if s.cfg.Transcript != nil && s.trErr == nil {
		b, err := json.Marshal(m)
		if err == nil {
			_, err = s.cfg.Transcript.Write(append(b, '\n'))
		}
		s.trErr = err
	}
}

// TranscriptErr reports the first failure to write the transcript.
func (s *Session) TranscriptErr() error { return s.trErr }

// Ask puts one question to the model and runs its tool calls until it
// answers. It returns the answer's text (unescaped; callers printing it to
// a terminal use Sanitize). On failure or cancellation the question and
// its partial turn are taken out of the history, so the session can go on;
// on ErrTurnCap they stay, so a follow-up can build on what was found.
func (s *Session) Ask(ctx context.Context, prompt string) (string, error) {
	mark := len(s.history)
	s.proposed, s.written = 0, 0
	answer, err := s.ask(ctx, prompt)
	if err != nil && !errors.Is(err, ErrTurnCap) {
		s.history = s.history[:mark]
	}
	return answer, err
}

// Changes reports what the latest Ask did to the disk: how many changes
// the model proposed (calls of a write tool) and how many of them the
// approval gate wrote. The model's own account of its changes is not
// trusted; these counts are.
func (s *Session) Changes() (proposed, written int) { return s.proposed, s.written }

// ChangeSummary says what Changes counted, for a person:
// "1 change proposed, 0 written".
func ChangeSummary(proposed, written int) string {
	noun := "changes"
	if proposed == 1 {
		noun = "change"
	}
	return fmt.Sprintf("%d %s proposed, %d written", proposed, noun, written)
}

func (s *Session) ask(ctx context.Context, prompt string) (string, error) {
	s.add(Message{Role: "user", Content: prompt})
	return s.turns(ctx)
}

// turns runs up to MaxTurns model replies and their tool calls, until the
// model answers.
func (s *Session) turns(ctx context.Context) (string, error) {
	for turn := 1; turn <= s.cfg.MaxTurns; turn++ {
		reply, err := s.reply(ctx)
		if err != nil {
			return "", err
		}
		s.add(reply)
		if len(reply.ToolCalls) == 0 {
			return reply.Content, nil
		}
		if turn == s.cfg.MaxTurns {
			break // do not run calls whose results nobody will read
		}
		for _, c := range reply.ToolCalls {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			s.add(s.run(ctx, c))
		}
	}
	return "", fail(ErrTurnCap, nil, fmt.Sprintf(
		"the model used all %d turns (--max-turns) without giving an answer; ask a narrower question or raise --max-turns", s.cfg.MaxTurns))
}

// reply gets one model reply within the context budget and the reply
// timeout.
func (s *Session) reply(ctx context.Context) (Message, error) {
	msgs, err := fit(s.history, s.tools, s.cfg.NumCtx)
	if err != nil {
		return Message{}, err
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if s.cfg.ReplyTimeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, s.cfg.ReplyTimeout)
	}
	defer cancel()
	onText := func(string) {}
	if s.stream != nil {
		onText = s.stream.Write
	}
	if s.cfg.Waiting != nil {
		s.cfg.Waiting.Start()
	}
	reply, err := s.cfg.Backend.Chat(rctx, Request{Model: s.cfg.Model, Messages: msgs, Tools: s.tools, NumCtx: s.cfg.NumCtx}, onText)
	if s.cfg.Waiting != nil {
		s.cfg.Waiting.Stop() // before the stream's last line and the activity lines
	}
	if s.stream != nil {
		s.stream.Flush()
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return Message{}, ctx.Err() // the caller cancelled: not the server's fault
	case rctx.Err() != nil:
		return Message{}, fail(ErrTimeout, err, fmt.Sprintf(
			"%s sent no complete reply within %v (--model-timeout); a large model may still be loading: try again, or raise --model-timeout", s.cfg.Backend, s.cfg.ReplyTimeout))
	default:
		return Message{}, err
	}
	reply.Role = "assistant"
	return reply, nil
}

// run executes one call and builds the result message, within the budget.
func (s *Session) run(ctx context.Context, c ToolCall) Message {
	res := s.cfg.Tools.Call(ctx, c.Name, json.RawMessage(c.Arguments))
	if s.isWrite(c.Name) {
		s.proposed++
		if res.Written {
			s.written++
		}
	}
	text, cut := truncateResult(res.Text, resultLimit(s.cfg.NumCtx), resultStart(c))
	s.activity(c, res, cut)
	return Message{Role: "tool", Content: text, ToolName: c.Name, ToolCallID: c.ID}
}

// isWrite reports whether name is an offered write tool: a call of it is a
// proposed change, whatever became of it.
func (s *Session) isWrite(name string) bool {
	for _, t := range s.tools {
		if t.Name == name {
			return t.Write
		}
	}
	return false
}
