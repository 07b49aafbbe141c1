package main

import (
	"context"
	"io"
	"sync"
)

// cutter stops a reply's text at an interrupt: once stopped, the writers
// it wrapped print nothing more of the reply (not the word the wrapper
// held back, not a chunk already received), only the newline that ends a
// line left open, once. Ctrl-C is the last thing the person sees the
// reply do. It is bound to the context of one reply (ask's, or chat's
// question): a write after that context ended is the loop finishing a
// reply it was told to stop, and is dropped. The context's error is set
// before anyone learns it ended, so no write of the loop's can slip past.
type cutter struct {
	mu      sync.Mutex
	ctx     context.Context // the reply's; nil: never cut by one
	binds   uint64          // the binds so far: the latest's number
	stopped bool
	ws      []*cutWriter
}

// bind cuts the writers off when ctx ends (and not before: it lets them
// print again, for chat's next question). unbind, once the reply is over,
// stops watching ctx, whose end (chat ends each question's context) then
// cuts nothing; a cut already made stays until the next bind.
func (c *cutter) bind(ctx context.Context) (unbind func()) {
	c.mu.Lock()
	c.ctx, c.stopped = ctx, false
	c.binds++
	this := c.binds
	c.mu.Unlock()
	// The cut runs on a goroutine of its own, which may start after
	// unbind and the next bind: it cuts only the reply it was bound to.
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.binds == this {
			c.stopLocked()
		}
	})
	return func() {
		stop()
		c.mu.Lock()
		c.ctx = nil
		c.mu.Unlock()
	}
}

// wrap returns w, cut off by c; nil stays nil.
func (c *cutter) wrap(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	cw := &cutWriter{c: c, w: w}
	c.mu.Lock()
	c.ws = append(c.ws, cw)
	c.mu.Unlock()
	return cw
}

// stopLocked cuts every wrapped writer off, ending a line left open;
// c.mu is held.
func (c *cutter) stopLocked() {
	if c.stopped {
		return
	}
	c.stopped = true
	for _, cw := range c.ws {
		if cw.open {
			io.WriteString(cw.w, "\n")
			cw.open = false
		}
	}
}

type cutWriter struct {
	c    *cutter
	w    io.Writer
	open bool // the last byte written was not a newline
}

func (cw *cutWriter) Write(p []byte) (int, error) {
	cw.c.mu.Lock()
	defer cw.c.mu.Unlock()
	if cw.c.ctx != nil && cw.c.ctx.Err() != nil {
		cw.c.stopLocked()
	}
	if cw.c.stopped || len(p) == 0 {
		return len(p), nil
	}
	n, err := cw.w.Write(p)
	if n > 0 {
		cw.open = p[n-1] != '\n'
	}
	return n, err
}
