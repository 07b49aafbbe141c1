package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/display"
)

// The --output formats of moat ask: text for people; json, one object at
// the end; stream-json, one agent.Event a line as it happens. The README
// documents both JSON schemas and testscripts/chat pins them.
const (
	outputText       = "text"
	outputJSON       = "json"
	outputStreamJSON = "stream-json"
)

// thinkWord is what --think takes: true, false or a level's name, passed
// through exactly; which of them a model takes is the server's to say.
var thinkWord = regexp.MustCompile(`^[a-z]+$`)

func checkThink(v *string) func() error {
	return func() error {
		if !thinkWord.MatchString(*v) {
			return fmt.Errorf("want true, false or a level such as low, medium or high, got %q", *v)
		}
		return nil
	}
}

// resultLimit is how much of a tool's result the json output keeps: its
// first line, this many characters at most (the whole is in stream-json).
const resultLimit = 200

// jsonCall is a tool call in the json output.
type jsonCall struct {
	Turn      int                  `json:"turn"`
	ID        string               `json:"id,omitempty"`
	Name      string               `json:"name"`
	Arguments json.RawMessage      `json:"arguments"`
	Recovered agent.TextCallFormat `json:"recovered,omitempty"`
	IsError   bool                 `json:"is_error"`
	Bytes     int                  `json:"bytes"`
	Truncated bool                 `json:"truncated,omitempty"`
	// Result is the result's first line, cut to 200 characters; null for
	// a call that did not run (the turn cap came first, or Ctrl-C).
	Result *string `json:"result"`
}

// jsonProposal is a write proposal in the json output.
type jsonProposal struct {
	Turn      int             `json:"turn"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Decision  string          `json:"decision"`
}

// jsonResult is the json output: the whole question in one object.
type jsonResult struct {
	Type       string          `json:"type"` // "result"
	Model      string          `json:"model"`
	Answer     string          `json:"answer"`
	Thinking   string          `json:"thinking,omitempty"`
	ToolCalls  []jsonCall      `json:"tool_calls"`
	Proposals  []jsonProposal  `json:"proposals"`
	Replies    []*agent.Stats  `json:"replies"`
	Stats      *agent.Stats    `json:"stats"`
	Reason     agent.EndReason `json:"reason"`
	Error      string          `json:"error,omitempty"`
	ExitStatus int             `json:"exit_status"`
}

// scriptOutput is the Observer behind --output and --stats: it keeps what
// the json output and the figures need, and writes stream-json lines as
// the events come. The end event is held until the exit status is known.
type scriptOutput struct {
	stream io.Writer // stream-json: where lines go; nil otherwise
	res    jsonResult
	think  strings.Builder // every reply's thinking, a blank line between
	// thinkTurn is the reply the last thinking came from.
	thinkTurn int
	end       *agent.Event
	err       error // the first failure to write a line
	// pending are, for each turn, the indices in res.ToolCalls of the
	// calls not yet run. A result is matched to the first pending call of
	// its turn with its id: by order where the server sent no ids (older
	// Ollama versions, some OpenAI-compatible servers) or the same one
	// twice, as the loop runs a reply's calls in order.
	pending map[int][]int
}

func newScriptOutput(model string, stream io.Writer) *scriptOutput {
	return &scriptOutput{stream: stream, pending: map[int][]int{}, res: jsonResult{Type: "result", Model: model, ToolCalls: []jsonCall{}, Proposals: []jsonProposal{}, Replies: []*agent.Stats{}}}
}

// Event implements agent.Observer.
func (r *scriptOutput) Event(e agent.Event) {
	switch e.Type {
	case agent.EventThinking:
		if r.think.Len() > 0 && e.Turn != r.thinkTurn {
			r.think.WriteString("\n\n") // one paragraph per reply
		}
		r.think.WriteString(e.Text)
		r.thinkTurn = e.Turn
	case agent.EventTurn:
		r.res.Replies = append(r.res.Replies, e.Stats)
	case agent.EventDecision:
		r.res.Proposals = append(r.res.Proposals, jsonProposal{Turn: e.Turn, ID: e.ID, Name: e.Name, Arguments: e.Arguments, Decision: e.Decision})
	case agent.EventToolResult:
		first, _, _ := strings.Cut(e.Text, "\n")
		if runes := []rune(first); len(runes) > resultLimit {
			first = string(runes[:resultLimit-1]) + "…"
		}
		p := r.pending[e.Turn]
		for k, i := range p {
			if r.res.ToolCalls[i].ID != e.ID {
				continue
			}
			c := &r.res.ToolCalls[i]
			c.IsError, c.Bytes, c.Truncated, c.Result = e.IsError, e.Bytes, e.Truncated, &first
			r.pending[e.Turn] = append(p[:k:k], p[k+1:]...)
			break
		}
	case agent.EventToolCall:
		r.pending[e.Turn] = append(r.pending[e.Turn], len(r.res.ToolCalls))
		r.res.ToolCalls = append(r.res.ToolCalls, jsonCall{Turn: e.Turn, ID: e.ID, Name: e.Name, Arguments: e.Arguments, Recovered: e.Recovered})
	case agent.EventEnd:
		r.end = &e
		r.res.Answer, r.res.Stats, r.res.Reason, r.res.Error = e.Text, e.Stats, e.Reason, e.Error
		return // written by finish, with the exit status
	}
	r.line(e)
}

func (r *scriptOutput) line(v any) {
	if r.stream == nil || r.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = r.stream.Write(append(visibleJSON(b), '\n'))
	}
	r.err = err
}

// visibleJSON escapes, as \uXXXX, what encoding/json leaves raw but a
// terminal would act on: C1 controls and invisible formatting characters
// (bidi overrides such as U+202E above all), so JSON output read on a
// terminal shows them instead of reordering the line. The decoded value
// is unchanged; such runes occur only inside strings.
func visibleJSON(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x80 && (r <= 0x9f || unicode.Is(unicode.Cf, r)) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else if out != nil {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

// finish writes the end: the stream-json end event or the json object,
// with the exit status. A session that never started (no server, no
// model) ends with reason error and what went wrong. It returns the
// first failure to write.
func (r *scriptOutput) finish(out io.Writer, format string, status int, err error) error {
	if r.end == nil {
		r.end = &agent.Event{Type: agent.EventEnd, Reason: agent.EndError, Stats: &agent.Stats{}}
		if err != nil {
			r.end.Error = err.Error()
		}
		r.res.Reason, r.res.Error, r.res.Stats = r.end.Reason, r.end.Error, r.end.Stats
	}
	switch format {
	case outputStreamJSON:
		r.line(struct {
			agent.Event
			ExitStatus int `json:"exit_status"`
		}{*r.end, status})
	case outputJSON:
		r.res.ExitStatus = status
		r.res.Thinking = r.think.String()
		b, _ := json.MarshalIndent(r.res, "", "  ")
		if _, werr := out.Write(append(visibleJSON(b), '\n')); r.err == nil {
			r.err = werr
		}
	}
	return r.err
}

// statsLine says a reply's or a question's figures for a person.
func statsLine(st *agent.Stats) string {
	if st == nil {
		return "no figures"
	}
	parts := []string{}
	if st.Replies != 1 {
		parts = append(parts, fmt.Sprintf("%d replies", st.Replies))
	}
	parts = append(parts,
		fmt.Sprintf("%d prompt tokens", st.PromptTokens),
		fmt.Sprintf("%d generated", st.OutputTokens))
	if st.TokensPerSecond > 0 {
		parts = append(parts, fmt.Sprintf("%.1f tokens/s", st.TokensPerSecond))
	}
	parts = append(parts,
		fmt.Sprintf("first token after %.1f s", float64(st.FirstTokenMS)/1000),
		fmt.Sprintf("%.1f s in all", float64(st.DurationMS)/1000))
	return strings.Join(parts, ", ")
}

// writeStats writes --stats: a line per reply, then the question's sum.
func writeStats(w io.Writer, replies []agent.Stats, total *agent.Stats) {
	if len(replies) > 1 {
		for i := range replies {
			fmt.Fprintf(w, "moat: reply %d: %s\n", i+1, statsLine(&replies[i]))
		}
	}
	fmt.Fprintf(w, "moat: figures: %s\n", statsLine(total))
}

// dimWriter shows the thinking dimmed on a colour terminal: each piece is
// wrapped in SGR 2 (faint) and 22 (normal), so an interrupted reply never
// leaves the terminal dim.
type dimWriter struct{ w io.Writer }

func (d dimWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(d.w, "\x1b[2m"+string(p)+"\x1b[22m"); err != nil {
		return 0, err
	}
	return len(p), nil
}

// thinkingOut is where --show-thinking writes: stderr, dimmed when it is
// a colour terminal, so stdout keeps only the answer.
func thinkingOut(e *env) io.Writer {
	if isTerminal(e.stderr) && display.Color(e.getenv) {
		return dimWriter{e.stderr}
	}
	return e.stderr
}

// writeChatStats is /stats: each reply to the last question when there
// were several, the question's sum and the session's.
func writeChatStats(w io.Writer, s *agent.Session) {
	if rs := s.ReplyStats(); len(rs) > 1 {
		for i := range rs {
			fmt.Fprintf(w, "moat: reply %d: %s\n", i+1, statsLine(&rs[i]))
		}
	}
	q, all := s.Stats()
	fmt.Fprintf(w, "moat: last question: %s\nmoat: session: %s\n", statsLine(&q), statsLine(&all))
}
