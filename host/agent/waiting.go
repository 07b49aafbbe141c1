package agent

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Waiting is told when the loop starts waiting for a reply and when the
// wait is over (the first text arrived, or the reply ended without text).
// Stop must return only once nothing more will be drawn.
type Waiting interface {
	Start()
	Stop()
}

// Spinner is a [Waiting] for a terminal: after a short delay (so a quick
// reply causes no flicker) it draws one line on w, redrawn in place, with
// the time waited so far, and erases it on Stop. Local models can take
// tens of seconds to load; the count shows that moat is not stuck.
//
// It writes carriage returns and an erase-line sequence, so it belongs on
// a terminal only, and on a line of its own: Stop is called before any
// other output of the loop.
type Spinner struct {
	w     io.Writer
	label string // trusted text: the caller escapes what it did not write
	delay time.Duration
	tick  time.Duration
	now   func() time.Time

	mu   sync.Mutex // guards stop and done
	stop chan struct{}
	done chan struct{}
	// phase is what the line says now: the label and the time counted
	// from, until Thinking changes both. Its own lock: Stop holds mu
	// while it waits for run, which reads phase.
	pmu   sync.Mutex
	phase struct {
		label string
		since time.Time
	}
}

// NewSpinner returns a spinner that shows "⠋ label… 12s" on w.
func NewSpinner(w io.Writer, label string) *Spinner {
	return &Spinner{w: w, label: label, delay: 300 * time.Millisecond, tick: 100 * time.Millisecond, now: time.Now}
}

var spinFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// Start begins a wait. A Start while a wait is shown is ignored.
func (s *Spinner) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		return
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.pmu.Lock()
	s.phase.label, s.phase.since = s.label, s.now()
	s.pmu.Unlock()
	go s.run(s.stop, s.done)
}

// Thinking implements ThinkingWaiting: the line now reads "thinking… 3s",
// counted from now.
func (s *Spinner) Thinking() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.phase.label, s.phase.since = "thinking", s.now()
}

// Stop ends the wait and erases the line if it was drawn.
func (s *Spinner) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop, s.done = nil, nil
}

func (s *Spinner) run(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(s.delay)
	defer t.Stop()
	drawn := false
	for frame := 0; ; frame++ {
		select {
		case <-stop:
			if drawn {
				io.WriteString(s.w, "\r\x1b[K")
			}
			return
		case <-t.C:
		}
		s.pmu.Lock()
		label, since := s.phase.label, s.phase.since
		s.pmu.Unlock()
		secs := int(s.now().Sub(since) / time.Second)
		fmt.Fprintf(s.w, "\r\x1b[K%c %s… %ds", spinFrames[frame%len(spinFrames)], label, secs)
		drawn = true
		t.Reset(s.tick)
	}
}
