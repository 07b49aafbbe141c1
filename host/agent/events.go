package agent

import "encoding/json"

// EventType names what an [Event] reports.
type EventType string

// The kinds of event, in the order a question produces them:
//
//	question                      the person's question
//	  thinking* text*             one model reply as it streams in
//	  tool_call*                  the calls it asked for, once it is complete
//	  turn                        the reply is over: its figures
//	  (proposal decision? tool_result)*   each call run, in order
//	  ... more replies ...
//	end                           the question is over: answer or failure
//
// A write tool's call has a proposal event before it runs and a decision
// event once the gate has answered; a read tool's has neither.
const (
	EventQuestion   EventType = "question"
	EventThinking   EventType = "thinking"
	EventText       EventType = "text"
	EventToolCall   EventType = "tool_call"
	EventTurn       EventType = "turn"
	EventProposal   EventType = "proposal"
	EventDecision   EventType = "decision"
	EventToolResult EventType = "tool_result"
	EventEnd        EventType = "end"
)

// Event is one thing that happened in a [Session], reported to
// [Config.Observer] as it happens. Its JSON form is the line format of
// `moat ask --output stream-json` and is a contract: fields may be added,
// never renamed. Text fields hold what the model, a server or a tool sent,
// unescaped: escape them (Sanitize) before printing them on a terminal.
//
// The events of a session are enough to replay the model's side and the
// calls: every reply's thinking, text and calls (ids and arguments as moat
// received them), every result as the model got it, each reply's figures,
// and how each question ended. A call recovered from text is told as the
// call, with its format; the text it was written as is in the transcript.
type Event struct {
	Type EventType `json:"type"`
	// Turn numbers the model's replies within the question from 1; the
	// events of one reply and of the calls it asked for share it. 0 on
	// question.
	Turn int `json:"turn"`
	// Text: question, the question; thinking and text, one piece as it
	// streamed in (concatenated they are the reply's thinking and text,
	// but for a closing </think> with no opening tag, which is found only
	// when the reply ends: end's text and the transcript have the split);
	// tool_result, the result as the model got it (after any cut for the
	// context window); end, the answer ("" when there is none).
	Text string `json:"text,omitempty"`
	// Model: question, the model asked.
	Model string `json:"model,omitempty"`

	// ID, Name and Arguments identify the call on tool_call, proposal,
	// decision and tool_result. Arguments is the arguments as the model
	// sent them when that is JSON, else a JSON string holding their text.
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Recovered, on tool_call: the model wrote the call as text in this
	// format (see [TextCallFormat]) and moat ran it as a call.
	Recovered TextCallFormat `json:"recovered,omitempty"`

	// On tool_result: the result was an error; the size of the whole
	// result in bytes; it was cut to fit the context window.
	IsError   bool `json:"is_error,omitempty"`
	Bytes     int  `json:"bytes,omitempty"`
	Truncated bool `json:"truncated,omitempty"`

	// Decision, on decision: written, rejected (the person said no),
	// refused (invalid, or nobody to ask) or error.
	Decision string `json:"decision,omitempty"`

	// Stats: on turn, the reply's figures; on end, the question's totals.
	Stats *Stats `json:"stats,omitempty"`

	// On end: why the question ended (an EndReason) and, unless it was
	// answered, the error as told to the person.
	Reason EndReason `json:"reason,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// EndReason says why a question ended.
type EndReason string

const (
	EndAnswer      EndReason = "answer"      // the model answered
	EndTurnCap     EndReason = "turn_cap"    // --max-turns replies without an answer
	EndInterrupted EndReason = "interrupted" // the caller cancelled (Ctrl-C)
	EndError       EndReason = "error"       // the server failed, or the reply broke off
	// EndCutOff: the server cut a reply off at its length limit (the
	// context window, or its own cap on generated tokens), so there is no
	// whole answer.
	EndCutOff EndReason = "cut_off"
	// EndEmptyReply: the model's reply was empty (no text and no call
	// arrived: it only thought, or the server dropped what it could not
	// parse) twice, the second time after it was told so.
	EndEmptyReply EndReason = "empty_reply"
)

// Stats are the figures of one reply, or the sums over several. Counts the
// server did not report are 0 (an OpenAI-compatible server sends usage
// only when asked, and some never do).
type Stats struct {
	Replies int `json:"replies"` // model replies counted (1 on a turn event)
	// PromptTokens is the tokens the server read (Ollama prompt_eval_count,
	// OpenAI usage.prompt_tokens), OutputTokens those it generated
	// (eval_count, usage.completion_tokens), thinking included.
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// TokensPerSecond is the generation rate: eval_count/eval_duration
	// from Ollama, the server's own timing from llama.cpp, else
	// OutputTokens over the time from the first token to the last.
	TokensPerSecond float64 `json:"tokens_per_second"`
	// FirstTokenMS is the wait from sending the request to the first
	// thinking, text or call (for sums: of the first reply);
	// DurationMS the wait until the reply was complete (for sums: total).
	FirstTokenMS int64 `json:"first_token_ms"`
	DurationMS   int64 `json:"duration_ms"`
	// The generation time and tokens behind TokensPerSecond, for sums.
	genMS     float64
	genTokens int
}

// Observer is told every [Event] of a session, synchronously and in order,
// on the goroutine that called Ask. It must not block for long: the reply
// streams meanwhile. It must not call the Session.
type Observer interface {
	Event(Event)
}

// ObserverFunc makes a function an [Observer].
type ObserverFunc func(Event)

// Event implements Observer.
func (f ObserverFunc) Event(e Event) { f(e) }

// argsJSON is a call's arguments for an Event: as sent when they are
// JSON, else their text as a JSON string.
func argsJSON(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}
