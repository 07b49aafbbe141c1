package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/toolspec"
)

// Activity lines are for a person watching: short, one per call, escaped.
const (
	maxSummary   = 80  // characters of the call's main argument shown
	maxErrorLine = 120 // characters of an error shown
)

// activity writes one line for a finished call:
//
//	→ read_file notes.txt (1.2 KB)
//	→ grep "TODO" in src (340 B)
//	→ read_file ../x: error: path escapes the sandbox: ../x
func (s *Session) activity(c ToolCall, res toolspec.Result, truncated bool) {
	head := "→ " + cut(Sanitize(c.Name, false), 40)
	if sum := summary(c.Name, c.Arguments); sum != "" {
		head += " " + sum
	}
	var line string
	switch {
	case res.IsError:
		first, _, _ := strings.Cut(res.Text, "\n")
		line = fmt.Sprintf("%s: %s", head, cut(Sanitize(first, false), maxErrorLine))
	case truncated:
		line = fmt.Sprintf("%s (%s, cut to %s for the context window)", head, proto.FormatSize(int64(len(res.Text))), proto.FormatSize(int64(resultLimit(s.cfg.NumCtx))))
	default:
		line = fmt.Sprintf("%s (%s)", head, proto.FormatSize(int64(len(res.Text))))
	}
	io.WriteString(s.cfg.Activity, line+"\n")
}

// summary shows what a call was about, as the tool table says
// (toolspec.SummaryOf): its path, or its pattern and where it searched.
// The arguments of a tool that does not exist, or that are not an object,
// are shown raw, cut short.
func summary(tool, args string) string {
	if strings.TrimSpace(args) == "" {
		return ""
	}
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return cut(Sanitize(args, false), maxSummary)
	}
	str := func(k string) (string, bool) {
		v, ok := m[k].(string)
		return cut(Sanitize(v, false), maxSummary), ok
	}
	if sum, ok := toolspec.SummaryOf(tool); ok {
		if sub, ok := str(sum.Subject); ok {
			if sum.Quote {
				sub = `"` + sub + `"`
			}
			if in, ok := str(sum.In); ok && sum.In != "" && in != "" && in != "." {
				sub += " in " + in
			}
			return sub
		}
	}
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return cut(Sanitize(string(b), false), maxSummary)
}

// cut shortens s to at most n runes, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
