package agent

import (
	"fmt"
	"io"
	"time"
)

// ThinkingWaiting is a [Waiting] that can also say the model is thinking:
// Thinking is called when the first thinking of a reply arrives and the
// thinking is not shown in full, so the live line reads "thinking… 12s"
// (counted from then) instead of "waiting…".
type ThinkingWaiting interface {
	Waiting
	Thinking()
}

// replyView shows one reply as it streams in and reports its pieces as
// events: thinking to the thinking stream (or only to the waiting line),
// text through the content filter to the answer stream.
type replyView struct {
	s      *Session
	turn   int
	filter contentFilter

	first      time.Time // the first thinking, text or call arrived
	thinkStart time.Time // zero until thinking arrives
	thinkDone  bool      // the thinking is over (text followed, or the reply ended)
}

func (s *Session) newView(turn int) *replyView {
	v := &replyView{s: s, turn: turn}
	v.filter = contentFilter{onThinking: v.thinking, onText: v.text}
	return v
}

// delta takes one piece from the backend.
func (v *replyView) delta(d Delta) {
	if v.first.IsZero() {
		v.first = time.Now()
	}
	if d.Thinking != "" {
		v.thinking(d.Thinking)
	}
	if d.Text != "" {
		v.filter.write(d.Text)
	}
}

func (v *replyView) thinking(t string) {
	s := v.s
	if v.thinkStart.IsZero() {
		v.thinkStart = time.Now()
		if tw, ok := s.cfg.Waiting.(ThinkingWaiting); ok && s.think == nil {
			tw.Thinking()
		}
	}
	s.emit(Event{Type: EventThinking, Turn: v.turn, Text: t})
	if s.think != nil {
		s.think.Write(t)
	}
}

func (v *replyView) text(t string) {
	v.endThinking()
	v.s.emit(Event{Type: EventText, Turn: v.turn, Text: t})
	if v.s.stream != nil {
		v.s.stream.Write(t)
	}
}

// endThinking closes the thinking once: the full view's line is ended,
// or, when it was not shown, one line says how long it took.
func (v *replyView) endThinking() {
	if v.thinkStart.IsZero() || v.thinkDone {
		return
	}
	v.thinkDone = true
	s := v.s
	if s.cfg.Waiting != nil {
		s.cfg.Waiting.Stop()
	}
	if s.think != nil {
		s.think.Flush()
		return
	}
	secs := time.Since(v.thinkStart).Seconds()
	io.WriteString(s.cfg.Activity, fmt.Sprintf("· thought for %.1f s (--show-thinking shows it)\n", secs))
}

// close ends the reply on the terminal: the waiting line goes, the
// thinking and the text end their lines.
func (v *replyView) close() {
	if v.s.cfg.Waiting != nil {
		v.s.cfg.Waiting.Stop()
	}
	v.endThinking()
	if v.s.stream != nil {
		v.s.stream.Flush()
	}
}
