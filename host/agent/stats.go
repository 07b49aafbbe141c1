package agent

import (
	"math"
	"time"
)

// replyStats measures one reply: the server's counts, the waits moat saw,
// and the generation rate from the server's own timing where it gave one.
func replyStats(start, first, end time.Time, u Usage) Stats {
	if first.IsZero() {
		first = end // nothing streamed: the reply came whole
	}
	st := Stats{
		Replies:      1,
		PromptTokens: u.PromptTokens,
		OutputTokens: u.OutputTokens,
		FirstTokenMS: first.Sub(start).Milliseconds(),
		DurationMS:   end.Sub(start).Milliseconds(),
	}
	gen := u.Generation
	if gen <= 0 {
		gen = end.Sub(first)
	}
	if gen > 0 && u.OutputTokens > 0 {
		st.genMS = float64(gen) / float64(time.Millisecond)
		st.genTokens = u.OutputTokens
		st.TokensPerSecond = rate(st.genTokens, st.genMS)
	}
	return st
}

// add sums a reply's figures into t.
func (t *Stats) add(r Stats) {
	if t.Replies == 0 {
		t.FirstTokenMS = r.FirstTokenMS
	}
	t.Replies += r.Replies
	t.PromptTokens += r.PromptTokens
	t.OutputTokens += r.OutputTokens
	t.DurationMS += r.DurationMS
	t.genMS += r.genMS
	t.genTokens += r.genTokens
	t.TokensPerSecond = rate(t.genTokens, t.genMS)
}

// rate is tokens per second, to one decimal.
func rate(tokens int, ms float64) float64 {
	if tokens == 0 || ms <= 0 {
		return 0
	}
	return math.Round(float64(tokens)/(ms/1000)*10) / 10
}

// forEvent is a copy for an Event.
func (t Stats) forEvent() *Stats { return &t }
