package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/toolspec"
)

// Context budget. Local models have small windows, and Ollama silently
// drops the start of a prompt that overflows num_ctx: the system prompt
// first. So the loop keeps every request within the window itself.
const (
	// bytesPerToken is a deliberately rough estimate (English text and code
	// average 3-4 bytes per token in common tokenizers); no tokenizer runs
	// here, so budgets keep a margin instead.
	bytesPerToken = 4
	// resultShare: one tool result may use at most 1/resultShare of the
	// window, so a single large file cannot push out the rest.
	resultShare = 4
	// replyShare: 1/replyShare of the window is kept free for the reply.
	replyShare = 8
	// perMessageTokens approximates the template tokens around a message.
	perMessageTokens = 8
)

func estimate(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

func messageTokens(m Message) int {
	n := perMessageTokens + estimate(m.Content) + estimate(m.Thinking)
	for _, c := range m.ToolCalls {
		n += perMessageTokens + estimate(c.Name) + estimate(c.Arguments)
	}
	return n
}

func toolsTokens(tools []*toolspec.Tool) int {
	n := 0
	for _, t := range tools {
		b, _ := json.Marshal(t.Schema)
		n += perMessageTokens + estimate(t.Name) + estimate(t.Description) + estimate(string(b))
	}
	return n
}

// resultLimit is the most bytes one tool result may keep.
func resultLimit(numCtx int) int { return numCtx * bytesPerToken / resultShare }

// truncateResult keeps a tool result within limit bytes, cutting at a line
// end where one is near and never inside a UTF-8 character, and says so in
// words the model can act on. firstLine, if positive, is the file line the
// text starts at (a read_file result): then the note names the offset to
// read on from, as read_file's own paging note does.
func truncateResult(text string, limit, firstLine int) (string, bool) {
	if len(text) <= limit {
		return text, false
	}
	size := proto.FormatSize(int64(len(text)))
	notice := fmt.Sprintf("\n[truncated: result was %s; ask for less (offset/limit, a narrower pattern)]", size)
	if firstLine > 0 {
		// The longest note this can be, so that the cut leaves room for it.
		notice = readNotice(size, firstLine, math.MaxInt32)
	}
	keep := max(limit-len(notice), 0)
	for keep > 0 && !utf8.RuneStart(text[keep]) {
		keep--
	}
	whole := false // the kept text ends at a line end
	if nl := strings.LastIndexByte(text[:keep], '\n'); nl >= keep/2 {
		keep, whole = nl, true
	}
	if firstLine > 0 {
		// Lines shown in full; a line cut short is read again.
		n := strings.Count(text[:keep], "\n")
		if whole {
			n++
		}
		notice = readNotice(size, firstLine, firstLine+n)
	}
	return text[:keep] + notice, true
}

// readNotice is the note on a cut result of the tool that pages a file by
// line (read_file).
func readNotice(size string, first, next int) string {
	if next <= first {
		return fmt.Sprintf("\n[truncated: result was %s, its first line longer than the context window allows; call %s with offset=%d and a smaller limit, or grep in the file]", size, lineReader(), first)
	}
	return fmt.Sprintf("\n[truncated: result was %s; showed lines %d-%d; call %s with offset=%d (and a smaller limit) to read on]", size, first, next-1, lineReader(), next)
}

// lineReader is the tool that reads a file by lines (proto.PagesByLine).
func lineReader() string {
	for _, d := range proto.Registry() {
		if d.Is(proto.PagesByLine) && !d.Is(proto.Internal) {
			return d.Name
		}
	}
	return ""
}

// resultStart is the file line the result of a call that pages a file by
// line (read_file) starts at (its offset, 1 by default), or 0 for another
// tool.
func resultStart(c ToolCall) int {
	if !proto.ToolIs(c.Name, proto.PagesByLine) {
		return 0
	}
	var a struct {
		Offset int `json:"offset"`
	}
	json.Unmarshal([]byte(c.Arguments), &a)
	return max(a.Offset, 1)
}

// Placeholders that replace older content when the history outgrows the
// window.
const (
	droppedResult  = "[older tool result dropped to fit the context window; call the tool again if you still need it]"
	droppedMessage = "[earlier message dropped to fit the context window]"
)

// fit returns the messages to send: a copy of history in which, when the
// whole does not fit the window, the oldest tool results and then the
// oldest turns are replaced by short placeholders. The system prompt
// (history[0]) and the latest user message are never touched; if even they
// do not fit, fit fails rather than let the server cut the prompt.
func fit(history []Message, tools []*toolspec.Tool, numCtx int) ([]Message, error) {
	limit := numCtx - numCtx/replyShare - toolsTokens(tools)
	msgs := make([]Message, len(history))
	copy(msgs, history)
	total := 0
	for _, m := range msgs {
		total += messageTokens(m)
	}
	if total <= limit {
		return msgs, nil
	}
	lastUser := 0
	for i, m := range msgs {
		if m.Role == "user" {
			lastUser = i
		}
	}
	replace := func(i int, m Message) {
		total += messageTokens(m) - messageTokens(msgs[i])
		msgs[i] = m
	}
	// First the tool results, oldest first: they are the bulk, and the
	// model can fetch them again.
	for i := 1; i < len(msgs) && total > limit; i++ {
		if m := msgs[i]; m.Role == "tool" && len(m.Content) > len(droppedResult) {
			m.Content = droppedResult
			replace(i, m)
		}
	}
	// Then whole earlier turns, oldest first, up to the latest question.
	for i := 1; i < lastUser && total > limit; i++ {
		m := msgs[i]
		if m.Role == "system" || m.Role == "tool" {
			continue
		}
		if len(m.Content) > len(droppedMessage) {
			m.Content = droppedMessage
		}
		m.Thinking = ""
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.Arguments = "{}"
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		replace(i, m)
	}
	if total > limit {
		return nil, fail(ErrContextFull, nil, fmt.Sprintf(
			"the conversation does not fit a context window of %d tokens (--num-ctx) even with older tool results dropped: about %d tokens are needed for the system prompt, the tool definitions and your message; raise --num-ctx or ask a shorter question",
			numCtx, total+numCtx-limit))
	}
	return msgs, nil
}
