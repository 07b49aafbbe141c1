package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/moatdev/moat/host/agent"
)

// ask puts the question and streams the answer to stdout as it arrives
// (--output text), or writes its events (stream-json) or one object at
// the end (json) instead. Whatever was printed stays printed when the
// answer is cut short (Ctrl-C, a failure), and the line is ended before
// moat says why.
func (a *agentFlags) ask(ctx context.Context, e *env, prompt string) error {
	out := &countWriter{w: e.stdout}
	var stream io.Writer = out
	var lines io.Writer
	switch a.output {
	case outputJSON:
		stream = nil
	case outputStreamJSON:
		stream, lines = nil, e.stdout
	}
	script := newScriptOutput(a.model, lines)
	s, err := a.open(ctx, e, "ask", stream, script)
	if err != nil {
		script.finish(e.stdout, a.output, interrupted(ctx, exitCode(err, io.Discard)), err)
		return err
	}
	defer s.close(e.stderr)
	script.res.Model = s.model
	// At Ctrl-C nothing more of the reply is printed (the line is ended).
	defer s.cut.bind(ctx)()
	answer, err := s.agent.Ask(ctx, prompt)
	s.recording.Finish(answer, err)
	reportChanges(e.stderr, s.agent)
	if a.stats {
		q, _ := s.agent.Stats()
		writeStats(e.stderr, s.agent.ReplyStats(), &q)
	}
	if errors.Is(err, context.Canceled) && out.n > 0 {
		err = exitError{code: exitFailure, msg: "interrupted; the answer above is incomplete"}
	} else {
		err = agentError(err)
	}
	if werr := script.finish(e.stdout, a.output, interrupted(ctx, exitCode(err, io.Discard)), err); werr != nil && err == nil {
		return fmt.Errorf("writing the %s output: %w", a.output, werr)
	}
	return err
}

// terminalWidth returns the width of w if it is a terminal, else 0.
func terminalWidth(w io.Writer) int {
	width, _, ok := terminalSize(w)
	if !ok || width < 20 {
		return 0 // too narrow to wrap usefully: leave it to the terminal
	}
	return width
}

// forTerminal sets how replies look where they are shown: streamed text
// wrapped to the width of stdout when stdout is a terminal, and a waiting
// indicator on stderr when stderr is one that can erase a line (not
// TERM=dumb). A pipe or file gets neither: the text as the model wrote
// it, and no carriage returns in a log.
func forTerminal(e *env, cfg agent.Config) agent.Config {
	if cfg.Stream != nil {
		cfg.Width = terminalWidth(e.stdout) // the stream is stdout, perhaps counted
	}
	if isTerminal(e.stderr) && e.getenv("TERM") != "dumb" {
		cfg.Waiting = agent.NewSpinner(e.stderr, "waiting for "+cutName(agent.Sanitize(cfg.Model, false)))
	}
	return cfg
}

// cutName keeps a model name short enough that the waiting line does not
// wrap (a wrapped line cannot be redrawn in place).
func cutName(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return s
}

// reportChanges says what the latest question did to the disk, when the
// model proposed anything: the model's own account may not be true.
func reportChanges(w io.Writer, s *agent.Session) {
	if p, n := s.Changes(); p > 0 {
		fmt.Fprintln(w, "moat:", agent.ChangeSummary(p, n))
	}
}

// countWriter counts the bytes written through it, so a command can tell
// whether any of an answer reached the screen before it was cut short.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
