package mcpserver

import (
	"context"
	"fmt"
	"sync/atomic"
)

// slots bounds the calls run at once and the calls waiting to run.
type slots struct {
	run     chan struct{}
	waiting atomic.Int64
	maxWait int64
}

func newSlots(maxCalls, maxWaiting int) *slots {
	if maxCalls <= 0 {
		maxCalls = DefaultMaxCalls
	}
	if maxWaiting <= 0 {
		maxWaiting = DefaultMaxWaiting
	}
	return &slots{run: make(chan struct{}, maxCalls), maxWait: int64(maxWaiting)}
}

// acquire takes a slot, waiting for one if every slot is taken and fewer
// than maxWait calls wait already. It returns the slot's release, or why
// the call is refused (busy, or cancelled while it waited).
func (s *slots) acquire(ctx context.Context) (release func(), refused string) {
	release = func() { <-s.run }
	select {
	case s.run <- struct{}{}:
		return release, ""
	default:
	}
	if n := s.waiting.Add(1); n > s.maxWait {
		s.waiting.Add(-1)
		return nil, fmt.Sprintf("moat is busy: %d calls are running and %d more are waiting, the most it holds; nothing was done, try again shortly", cap(s.run), s.maxWait)
	}
	defer s.waiting.Add(-1)
	select {
	case s.run <- struct{}{}:
		return release, ""
	case <-ctx.Done():
		return nil, "the call was cancelled while it waited for its turn; nothing was done"
	}
}
