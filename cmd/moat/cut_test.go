package main

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// A cutter drops every write after its reply's context ended, ends a line
// left open once, and lets the next reply (a new bind) print again; the
// end of a context it no longer watches cuts nothing.
func TestCutter(t *testing.T) {
	var out bytes.Buffer
	c := &cutter{}
	w := c.wrap(&out)
	if c.wrap(nil) != nil {
		t.Error("wrap(nil) is not nil")
	}
	ctx, cancel := context.WithCancel(context.Background())
	unbind := c.bind(ctx)
	io.WriteString(w, "Hi ")
	cancel()
	io.WriteString(w, "there") // the held-back word, flushed after Ctrl-C
	io.WriteString(w, "\n")
	unbind()
	if got := out.String(); got != "Hi \n" {
		t.Errorf("after the interrupt: %q, want %q", got, "Hi \n")
	}

	out.Reset()
	ctx2, cancel2 := context.WithCancel(context.Background())
	unbind = c.bind(ctx2)
	io.WriteString(w, "Two.\n")
	unbind()
	cancel2() // chat ends each question's context once it is answered
	io.WriteString(w, "after\n")
	if got := out.String(); got != "Two.\nafter\n" {
		t.Errorf("the next reply: %q, want %q", got, "Two.\nafter\n")
	}
}

// TestCutterLateCut: the cut of a reply whose context ended runs on a
// goroutine of its own, which may start only after the next reply is
// bound: it must not cut that one.
func TestCutterLateCut(t *testing.T) {
	for i := range 2000 {
		var out bytes.Buffer
		c := &cutter{}
		w := c.wrap(&out)
		ctx, cancel := context.WithCancel(context.Background())
		unbind := c.bind(ctx)
		cancel()
		unbind()
		unbind = c.bind(context.Background())
		io.WriteString(w, "next\n")
		unbind()
		if got := out.String(); got != "next\n" {
			t.Fatalf("round %d: the next reply printed %q", i, got)
		}
	}
}
