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
// and Ollama itself offer. A thinking model's thinking is kept apart from
// its answer, figures are taken from each reply, and a tool call the model
// wrote as text is recovered; every step is told to [Config.Observer] as
// an [Event].
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content"`
	// Thinking is what a thinking model reasoned before its content
	// (Ollama message.thinking, OpenAI-compatible reasoning_content or
	// reasoning, or a <think> block taken out of the content). It is kept
	// in the transcript; it goes back to the server only on the tool-call
	// turns of the question being answered, where the APIs ask for it.
	Thinking   string     `json:"thinking,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`    // role tool: the tool that ran
	ToolCallID string     `json:"tool_call_id,omitempty"` // role tool: the call it answers
	// Recovered, on an assistant message: its tool calls were written as
	// text in this format and moat ran them as calls. The content keeps
	// the text as the model wrote it, so the model sees its own call
	// whatever its chat template makes of ToolCalls.
	Recovered TextCallFormat `json:"recovered,omitempty"`
	// FromMoat, on a user message: moat wrote it to the model itself (the
	// note after an empty reply, EmptyReplyNote); it is no question.
	FromMoat bool `json:"from_moat,omitempty"`
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
	// Think is --think passed through: "" (not sent: the model's
	// default), "true", "false" or a level such as "high".
	Think string
}

// Delta is one piece of a reply as it streams in: thinking or text.
type Delta struct {
	Thinking string
	Text     string
}

// Usage is what the server reported about one reply; 0 where it did not.
type Usage struct {
	PromptTokens int
	OutputTokens int
	// Generation is the time the server says it spent generating
	// (Ollama eval_duration, llama.cpp timings.predicted_ms).
	Generation time.Duration
	// DoneReason is why the server says the reply ended: Ollama's
	// done_reason, OpenAI's finish_reason ("stop", "length",
	// "tool_calls", ...); "" when it did not say. "length" is a reply cut
	// off at a limit.
	DoneReason string
}

// Backend speaks one wire format to one server.
type Backend interface {
	// Chat sends the conversation and returns the model's whole reply and
	// the server's figures for it, calling onDelta with each piece of
	// thinking or text as it streams in. A reply that ends before the
	// server says it is complete is an error.
	Chat(ctx context.Context, req Request, onDelta func(Delta)) (Message, Usage, error)
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

// ThinkChecker is a Backend that can tell which --think values a model
// takes; nil values mean it cannot tell.
type ThinkChecker interface {
	ThinkValues(ctx context.Context, model string) ([]string, error)
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
	// Width, if positive, wraps the streamed text (and the thinking) at
	// spaces to lines of at most this many columns (a terminal's width).
	Width int
	// Waiting is started whenever the loop waits for a reply and stopped
	// when its first text arrives or the reply ends, before anything else
	// is written; nil shows nothing.
	Waiting Waiting
	// Transcript gets every message exchanged as one JSON object per line;
	// nil: none is written.
	Transcript io.Writer
	// Observer is told every Event as it happens; nil: nobody is.
	Observer Observer
	// Think is passed to the server with every request (Request.Think).
	Think string
	// Thinking gets the model's thinking in full as it arrives, escaped,
	// apart from the answer; nil: thinking is not shown (Waiting is told
	// how long it lasts, if it is a ThinkingWaiting).
	Thinking io.Writer
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
	think   *streamSanitizer // the thinking in full, when it is shown
	trErr   error
	// Proposals and approved writes during the latest Ask.
	proposed, written int
	// Figures of the latest question (each reply, and their sum) and of
	// the whole session.
	replies     []Stats
	last, total Stats
	// turn numbers the replies to the latest question (events carry it).
	turn int
	// thoughtAnyway: the model thought although --think false asked it not
	// to, and the person was told (once a session).
	thoughtAnyway bool
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
	if cfg.Thinking != nil {
		s.think = &streamSanitizer{w: cfg.Thinking, wrap: wrapper{width: cfg.Width}}
		if cfg.Waiting != nil {
			s.think.before = cfg.Waiting.Stop
		}
	}
	s.add(Message{Role: "system", Content: cfg.System})
	return s
}

// Stats returns the figures of the latest question and of the whole
// session so far (Clear does not reset the session's).
func (s *Session) Stats() (question, session Stats) { return s.last, s.total }

// ReplyStats returns the figures of each reply to the latest question.
func (s *Session) ReplyStats() []Stats { return append([]Stats(nil), s.replies...) }

func (s *Session) emit(e Event) {
	if s.cfg.Observer != nil {
		s.cfg.Observer.Event(e)
	}
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
	if s.think != nil {
		s.think.wrap.width = max(n, 0)
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
	s.last, s.replies, s.turn = Stats{}, nil, 0
	s.emit(Event{Type: EventQuestion, Text: prompt, Model: s.cfg.Model})
	return s.question(func() (string, error) { return s.ask(ctx, prompt) })
}

// question runs the loop for Ask or Continue: what the run proposed and
// wrote is counted afresh, a failed or cancelled run's messages are taken
// out of the history again, and the end is reported.
func (s *Session) question(run func() (string, error)) (string, error) {
	mark := len(s.history)
	s.proposed, s.written = 0, 0
	answer, err := run()
	if err != nil && !errors.Is(err, ErrTurnCap) {
		s.history = s.history[:mark]
	}
	end := Event{Type: EventEnd, Turn: s.turn, Text: answer, Reason: EndAnswer, Stats: s.last.forEvent()}
	switch {
	case err == nil:
	case errors.Is(err, ErrTurnCap):
		end.Reason, end.Error = EndTurnCap, err.Error()
	case errors.Is(err, context.Canceled):
		end.Reason, end.Error = EndInterrupted, "interrupted"
	case errors.Is(err, ErrCutOff):
		end.Reason, end.Error = EndCutOff, err.Error()
	case errors.Is(err, ErrEmptyReply):
		end.Reason, end.Error = EndEmptyReply, err.Error()
	default:
		end.Reason, end.Error = EndError, err.Error()
	}
	s.emit(end)
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
// model answers. Replies are numbered on from s.turn, across a Continue.
func (s *Session) turns(ctx context.Context) (string, error) {
	told := false // the model was told once that its reply was empty
	for i := 1; i <= s.cfg.MaxTurns; i++ {
		s.turn++
		reply, err := s.reply(ctx, s.turn)
		if err != nil {
			return "", err
		}
		s.add(reply)
		if len(reply.ToolCalls) == 0 && strings.TrimSpace(reply.Content) == "" {
			// No answer and no call: the model only thought, or the
			// server dropped what it could not parse (a call of a tool
			// not offered, a malformed call, text outside the model's
			// format). Never an answer; the model is told once.
			what := emptyWhat(reply)
			if told {
				return "", fail(ErrEmptyReply, nil, fmt.Sprintf(
					"the model's reply was empty again (%s) after moat told it so; it gave no answer. Try again, rephrase the question, or try another model", what))
			}
			told = true
			fmt.Fprintf(s.cfg.Activity, "moat: the model's reply was empty (%s); telling it so and letting it try again\n", what)
			s.add(Message{Role: "user", Content: EmptyReplyNote, FromMoat: true})
			continue
		}
		if len(reply.ToolCalls) == 0 {
			return reply.Content, nil
		}
		if i == s.cfg.MaxTurns {
			break // do not run calls whose results nobody will read
		}
		for _, c := range reply.ToolCalls {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			s.add(s.run(ctx, s.turn, c))
		}
	}
	return "", fail(ErrTurnCap, nil, fmt.Sprintf(
		"the model used all %d turns (--max-turns) without giving an answer; ask a narrower question or raise --max-turns", s.cfg.MaxTurns))
}

// reply gets one model reply within the context budget and the reply
// timeout, shows it as it streams (thinking apart from text), recovers a
// call written as text, and reports the reply's events and figures.
func (s *Session) reply(ctx context.Context, turn int) (Message, error) {
	msgs, err := fit(sendable(s.history), s.tools, s.cfg.NumCtx)
	if err != nil {
		return Message{}, err
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if s.cfg.ReplyTimeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, s.cfg.ReplyTimeout)
	}
	defer cancel()
	v := s.newView(turn)
	if s.cfg.Waiting != nil {
		s.cfg.Waiting.Start()
	}
	start := time.Now()
	reply, usage, err := s.cfg.Backend.Chat(rctx, Request{Model: s.cfg.Model, Messages: msgs, Tools: s.tools, NumCtx: s.cfg.NumCtx, Think: s.cfg.Think}, v.delta)
	end := time.Now()
	if err != nil {
		v.close() // what streamed stays; the held text is dropped with the reply
		switch {
		case ctx.Err() != nil:
			return Message{}, ctx.Err() // the caller cancelled: not the server's fault
		case rctx.Err() != nil:
			return Message{}, fail(ErrTimeout, err, fmt.Sprintf(
				"%s sent no complete reply within %v (--model-timeout); a large model may still be loading: try again, or raise --model-timeout", s.cfg.Backend, s.cfg.ReplyTimeout))
		}
		return Message{}, err
	}
	reply.Role = "assistant"
	content, tagged, held := v.filter.finish()
	reply.Content = content
	if tagged != "" {
		reply.Thinking = strings.TrimSpace(reply.Thinking + tagged)
	}
	if len(reply.ToolCalls) == 0 && held != "" {
		if calls, format := recoverCalls(held, s.isTool); calls != nil {
			for i := range calls {
				calls[i].ID = fmt.Sprintf("text_call_%d_%d", turn, i)
			}
			reply.ToolCalls, reply.Recovered, held = calls, format, ""
		}
	}
	if held != "" {
		v.text(held)
	}
	v.close() // the waiting line, the thinking and the text end before the activity lines
	if reply.Recovered != "" {
		io.WriteString(s.cfg.Activity, recoveredNote(reply.Recovered, len(reply.ToolCalls))+"\n")
	}
	for _, c := range reply.ToolCalls {
		s.emit(Event{Type: EventToolCall, Turn: turn, ID: c.ID, Name: c.Name, Arguments: argsJSON(c.Arguments), Recovered: reply.Recovered})
	}
	st := replyStats(start, v.first, end, usage)
	s.replies = append(s.replies, st)
	s.last.add(st)
	s.total.add(st)
	s.emit(Event{Type: EventTurn, Turn: turn, Stats: st.forEvent()})
	if usage.DoneReason == "length" {
		return Message{}, s.cutOff(reply, usage)
	}
	if s.cfg.Think == "false" && strings.TrimSpace(reply.Thinking) != "" && !s.thoughtAnyway {
		s.thoughtAnyway = true
		fmt.Fprintf(s.cfg.Activity, "moat: --think false: model %s thought anyway (it or the server does not turn its thinking off; gpt-oss never does, --think low makes it think least)\n", Sanitize(s.cfg.Model, false))
	}
	return reply, nil
}

// EmptyReplyNote is what the model is told, once a question, after a
// reply with no answer and no call.
const EmptyReplyNote = "Your last reply was empty: no answer and no tool call arrived (a tool call that names a tool not offered, or that is not well formed, is dropped). Call one of the tools offered, with JSON arguments, or write your answer as text."

// emptyWhat says what an empty reply held, for the person.
func emptyWhat(m Message) string {
	if strings.TrimSpace(m.Thinking) != "" {
		return "it only thought, and wrote no answer or call"
	}
	return "nothing arrived; the server drops a tool call it cannot parse, such as one of a tool not offered, and text outside the model's format"
}

// cutOff is the failure of a reply the server stopped at a length limit:
// it says so, what was lost, and what to raise.
func (s *Session) cutOff(reply Message, usage Usage) error {
	where := "what streamed above is not the whole answer"
	switch {
	case len(reply.ToolCalls) > 0:
		where = "its tool calls were not run, as the last of them may be cut"
	case strings.TrimSpace(reply.Content) == "" && strings.TrimSpace(reply.Thinking) != "":
		where = "it was cut while the model was still thinking, or inside a tool call the server holds back until it is whole, so it holds no answer"
	case strings.TrimSpace(reply.Content) == "":
		where = "nothing of it arrived: the server holds back a tool call or thinking until it is whole"
	}
	tokens := ""
	if usage.OutputTokens > 0 {
		tokens = fmt.Sprintf(" after %d generated tokens", usage.OutputTokens)
	}
	return fail(ErrCutOff, nil, fmt.Sprintf(
		"%s cut the model's reply off at its length limit%s (it ended the reply with \"length\"); %s. Raise the context window (--num-ctx, now %d; over --api openai the server's own context setting applies instead) or the server's own limit (Ollama's num_predict or OLLAMA_CONTEXT_LENGTH, another server's max tokens or context size), or ask a narrower question",
		s.cfg.Backend, tokens, where, s.cfg.NumCtx))
}

// run executes one call and builds the result message, within the budget.
func (s *Session) run(ctx context.Context, turn int, c ToolCall) Message {
	ev := Event{Turn: turn, ID: c.ID, Name: c.Name, Arguments: argsJSON(c.Arguments)}
	write := s.isWrite(c.Name)
	if write {
		ev.Type = EventProposal
		s.emit(ev)
	}
	res := s.cfg.Tools.Call(ctx, c.Name, json.RawMessage(c.Arguments))
	if write {
		s.proposed++
		if res.Written {
			s.written++
		}
		ev.Type, ev.Decision = EventDecision, decisionOf(res)
		s.emit(ev)
		ev.Decision = ""
	}
	text, cut := truncateResult(res.Text, resultLimit(s.cfg.NumCtx), resultStart(c))
	s.activity(c, res, cut)
	ev.Type, ev.Text, ev.IsError, ev.Bytes, ev.Truncated = EventToolResult, text, res.IsError, len(res.Text), cut
	s.emit(ev)
	return Message{Role: "tool", Content: text, ToolName: c.Name, ToolCallID: c.ID}
}

// decisionOf names what became of a proposal. The gate's result says it:
// Written, or a text that starts "rejected:" (the person said no) or
// "refused:" (invalid, or nobody to ask); any other error is "error".
func decisionOf(res toolspec.Result) string {
	switch {
	case res.Written:
		return "written"
	case strings.HasPrefix(res.Text, "rejected:"):
		return "rejected"
	case strings.HasPrefix(res.Text, "refused:"):
		return "refused"
	}
	return "error"
}

// isTool reports whether name is a tool of this session.
func (s *Session) isTool(name string) bool {
	for _, t := range s.tools {
		if t.Name == name {
			return true
		}
	}
	return false
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
