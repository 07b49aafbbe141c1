package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"
	"golang.org/x/term"

	"github.com/moatdev/moat/host/agent"
)

func chatCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat chat", flag.ContinueOnError)
	var a agentFlags
	a.register(fs)
	return &ffcli.Command{
		Name:       "chat",
		ShortUsage: "moat chat [flags]",
		ShortHelp:  "talk with a model about the folder",
		LongHelp: `An interactive conversation with a local model that can look at the sandbox
root through moat's tools. Replies stream as they arrive; tool calls are
shown on standard error as in 'moat ask'.

On a terminal you get line editing and history. Ctrl-C stops the reply
being written (the conversation goes on); Ctrl-D or /exit leaves.
When standard input is not a terminal, each line is one question, so a
conversation can be piped in.

The whole session shares one sandbox and one conversation: the model
remembers earlier questions until the context window (--num-ctx) forces
the oldest tool results out. Run 'moat help ask' for the rules the model
is given.`,
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("chat takes no arguments; for one question use moat ask PROMPT")
			}
			return a.chat(ctx, e)
		},
	}
}

// chat runs the session. Interrupts are handled here rather than by run's
// context: Ctrl-C must cancel the running reply, not the session, so the
// session's context does not inherit run's cancellation.
func (a *agentFlags) chat(ctx context.Context, e *env) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	sctx, endSession := context.WithCancel(context.WithoutCancel(ctx))
	defer endSession()

	var mu sync.Mutex
	var cancelTurn context.CancelFunc // guarded by mu; nil between turns
	go func() {
		for {
			select {
			case <-sctx.Done():
				return
			case sig := <-sigs:
				mu.Lock()
				if sig == os.Interrupt && cancelTurn != nil {
					cancelTurn()
				} else {
					endSession()
				}
				mu.Unlock()
			}
		}
	}()

	in := newLineReader(e)
	defer in.close()
	s, err := a.open(sctx, e, in.out)
	if err != nil {
		return err
	}
	defer s.close(e.stderr)
	if in.interactive {
		fmt.Fprintf(e.stderr, "moat chat: %s on %s, root %s\nCtrl-C stops a reply; Ctrl-D or /exit leaves.\n",
			agent.Sanitize(s.model, false), s.backend, agent.Sanitize(s.root, false))
	}

	lines := make(chan lineResult, 1)
	for {
		go func() {
			l, err := in.readLine()
			lines <- lineResult{l, err}
		}()
		var lr lineResult
		select {
		case lr = <-lines:
		case <-sctx.Done():
			return nil
		}
		if lr.err == io.EOF {
			return nil
		}
		if lr.err != nil {
			return fmt.Errorf("reading input: %w", lr.err)
		}
		q := strings.TrimSpace(lr.line)
		switch q {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		}
		tctx, cancel := context.WithCancel(sctx)
		mu.Lock()
		cancelTurn = cancel
		mu.Unlock()
		_, err := s.agent.Ask(tctx, q)
		mu.Lock()
		cancelTurn = nil
		mu.Unlock()
		cancel()
		switch {
		case err == nil:
		case sctx.Err() != nil:
			return nil
		case errors.Is(err, context.Canceled):
			fmt.Fprintln(e.stderr, "moat: reply stopped; the question was left out of the conversation")
		default:
			// The session goes on: the server may come back, and a
			// turn-cap's findings stay in the history.
			fmt.Fprintln(e.stderr, "moat:", err)
		}
	}
}

type lineResult struct {
	line string
	err  error
}

// lineReader reads questions: through golang.org/x/term (line editing,
// history) when stdin is a terminal, plainly otherwise.
type lineReader struct {
	interactive bool
	out         io.Writer // where replies stream
	fd          int
	saved       *term.State // the terminal's state at start, restored on close
	t           *term.Terminal
	plain       *bufio.Reader
	tty         *os.File // /dev/tty opened for the prompt, if any
}

func newLineReader(e *env) *lineReader {
	r := &lineReader{out: e.stdout}
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if st, err := term.GetState(int(f.Fd())); err == nil {
			r.interactive, r.fd, r.saved = true, int(f.Fd()), st
			r.t = term.NewTerminal(struct {
				io.Reader
				io.Writer
			}{e.stdin, r.echoTo(e.stdout)}, "moat> ")
			return r
		}
	}
	r.plain = bufio.NewReader(e.stdin)
	return r
}

// readLine returns the next question. On a terminal, raw mode lasts only
// while a line is edited, so during a reply Ctrl-C is a signal and the
// approval gate finds the terminal as it expects it.
func (r *lineReader) readLine() (string, error) {
	if !r.interactive {
		l, err := r.plain.ReadString('\n')
		if err == io.EOF && l != "" {
			err = nil
		}
		return l, err
	}
	old, err := term.MakeRaw(r.fd)
	if err != nil {
		return "", err
	}
	defer term.Restore(r.fd, old)
	return r.t.ReadLine() // io.EOF on Ctrl-D (or Ctrl-C) at the prompt
}

// echoTo picks where the prompt and the line being edited are drawn: the
// terminal the keys come from. That is stdout when it is a terminal too;
// when stdout is redirected (moat chat > answers.txt), the controlling
// terminal, so the file gets only the replies.
func (r *lineReader) echoTo(stdout io.Writer) io.Writer {
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return stdout
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		r.tty = tty
		return tty
	}
	return stdout
}

func (r *lineReader) close() {
	if r.saved != nil {
		term.Restore(r.fd, r.saved)
	}
	if r.tty != nil {
		r.tty.Close()
	}
}
