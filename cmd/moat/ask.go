package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/gate"
)

func askCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat ask", flag.ContinueOnError)
	var a agentFlags
	a.register(fs)
	return &ffcli.Command{
		Name:       "ask",
		ShortUsage: "moat ask [flags] PROMPT",
		ShortHelp:  "ask one question about the folder",
		LongHelp: `Puts one question to a local model that can look at the sandbox root through
moat's tools, and streams what it writes to standard output as it arrives
(text it writes before a tool call included). Each tool call the model
makes is shown on standard error as it runs, and if it proposed changes,
how many were written:

  → read_file README.md (2.1 KB)
  → read_file ../x: error: path escapes the sandbox: ../x
  moat: 1 change proposed, 0 written

On a terminal, moat shows how long it has waited for the first word (a
local model can take a while to load) and wraps the text to the window.
Ctrl-C stops the answer and keeps what was printed (exit status 130).

Changes the model proposes are shown on the terminal for a yes or no;
without a terminal (cron, a service, setsid) the model is not offered
propose_write and propose_edit at all, as with --writes deny.

PROMPT is the rest of the command line; "-" reads it from standard input.
With no --model, moat picks the first installed model that supports tools
and says which.

Flags may also come after the question (moat ask "what is here?" --root
sub); "--" ends the flags, for a question that starts with a dash.

Exit status: 0 an answer; 1 failure (server unreachable, model missing,
HTTP or stream error); 2 usage; 3 the model used --max-turns replies
without answering; 4 --isolate require and isolation cannot start here;
130 interrupted (Ctrl-C).

The model is told these rules (replace them with --system FILE):

` + indent(agent.SystemPrompt, "  "),
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) == 0 {
				return usagef("ask needs a question, e.g. moat ask \"What does this project do?\"")
			}
			prompt := strings.Join(args, " ")
			if prompt == "-" {
				b, err := io.ReadAll(e.stdin)
				if err != nil {
					return fmt.Errorf("reading the question from stdin: %w", err)
				}
				prompt = string(b)
			}
			if strings.TrimSpace(prompt) == "" {
				return usagef("the question is empty")
			}
			return a.ask(ctx, e, prompt)
		},
	}
}

// agentFlags are the flags ask and chat share.
type agentFlags struct {
	c            common
	w            writeFlags
	api          string
	host         string
	model        string
	maxTurns     int
	numCtx       int
	modelTimeout time.Duration
	system       string
	transcript   string

	fs        *flag.FlagSet // to tell flags given from defaults
	numCtxWhy string        // where the context window in use came from
}

// Bounds on the flags: below minNumCtx the system prompt and tool
// definitions alone fill the window.
const (
	minNumCtx    = 2048
	setupTimeout = 30 * time.Second // listing and checking models
)

func (a *agentFlags) register(fs *flag.FlagSet) {
	a.fs = fs
	a.c.register(fs)
	a.w.register(fs, askAtTerminal)
	fs.StringVar(&a.api, "api", "ollama", "wire format: ollama (native /api/chat) or openai (/v1/chat/completions, as llama.cpp's server, LM Studio and vLLM speak it)")
	fs.StringVar(&a.host, "host", "", "the model server, as URL or host:port (default: $OLLAMA_HOST, else "+agent.DefaultHost+")")
	fs.StringVar(&a.model, "model", "", "the model (default: the first installed model with tool support)")
	fs.IntVar(&a.maxTurns, "max-turns", agent.DefaultMaxTurns, "most model replies per question; then moat stops with exit status 3")
	fs.IntVar(&a.numCtx, "num-ctx", 0, "context window in tokens, sent as num_ctx; tool results and history are kept within it (default: the model's num_ctx parameter, else the context the server runs it with, else $OLLAMA_CONTEXT_LENGTH, else 8192; at most its trained length)")
	fs.DurationVar(&a.modelTimeout, "model-timeout", 5*time.Minute, "longest wait for one complete model reply (loading a large model counts)")
	fs.StringVar(&a.system, "system", "", "read the system prompt from this `file` instead of using the built-in one")
	fs.StringVar(&a.transcript, "transcript", "", "append every message exchanged to this `file`, one JSON object per line")
	validate(fs, "api", oneOf(&a.api, "ollama", "openai"))
	validate(fs, "host", parsedBy(&a.host, agent.ParseHost))
	validate(fs, "max-turns", atLeast(&a.maxTurns, 1, ""))
	validate(fs, "num-ctx", atLeast(&a.numCtx, minNumCtx, "the rules and tool definitions alone take about 1500 tokens"))
	validate(fs, "model-timeout", positive(&a.modelTimeout))
}

// session is one opened conversation: backend, model, engine, transcript.
type session struct {
	agent   *agent.Session
	backend agent.Backend
	model   string
	root    string
	closers []func() error
}

// close reports a transcript that could not be written and closes what the
// session opened. It is also called on a session that failed part way
// through opening, before the conversation (s.agent) existed.
func (s *session) close(stderr io.Writer) {
	if s.agent != nil {
		if err := s.agent.TranscriptErr(); err != nil {
			fmt.Fprintln(stderr, "moat: writing the transcript:", err)
		}
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// open checks the flags, finds the server and the model (before compiling
// the sandbox, so a missing server is reported at once), opens the engine
// and starts the conversation. stream, if not nil, gets the model's text
// as it arrives.
func (a *agentFlags) open(ctx context.Context, e *env, stream io.Writer) (*session, error) {
	if _, _, err := a.c.sandbox(); err != nil {
		return nil, err
	}
	system := ""
	if a.system != "" {
		b, err := os.ReadFile(a.system)
		if err != nil {
			return nil, fileError(e.source("system"), a.system, err)
		}
		if system = string(b); strings.TrimSpace(system) == "" {
			return nil, usagef("--system: %s is empty", a.system)
		}
	}
	b, _, note, err := modelServer(a.host, a.api, isSet(a.fs, "api"), e.getenv, &http.Client{})
	if err != nil {
		return nil, err
	}
	if note != "" {
		fmt.Fprintln(e.stderr, note)
	}

	model, err := a.pickModel(ctx, e, b)
	if err != nil {
		return nil, err
	}
	if a.numCtx == 0 {
		wctx, cancel := context.WithTimeout(ctx, setupTimeout)
		w, known, _ := windowOf(wctx, b, model) // unknown: the default
		cancel()
		a.numCtx, a.numCtxWhy = contextWindow(w, known, e.getenv)
	} else {
		a.numCtxWhy = "--num-ctx"
	}
	s := &session{backend: b, model: model, root: a.c.root}
	ok := false
	defer func() {
		if !ok {
			s.close(e.stderr)
		}
	}()
	var tr io.Writer
	if a.transcript != "" {
		f, err := os.OpenFile(a.transcript, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fileError(e.source("transcript"), a.transcript, err)
		}
		s.closers = append(s.closers, f.Close)
		tr = f
	}
	w := a.w
	if w.offered() && !gate.HasTerminal() {
		// Every proposal would be refused: better the model not try
		// (said in help, not on every run of a script).
		w.writes = "deny"
	}
	eng, err := a.c.openEngine(ctx, e.stderr, &w)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, eng.Close)
	s.agent = agent.New(forTerminal(e, agent.Config{
		Backend: b, Tools: eng, Model: model, System: system,
		MaxTurns: a.maxTurns, NumCtx: a.numCtx, ReplyTimeout: a.modelTimeout,
		Activity: e.stderr, Stream: stream, Transcript: tr,
	}))
	ok = true
	return s, nil
}

// pickModel checks the model named with --model, or picks one.
func (a *agentFlags) pickModel(ctx context.Context, e *env, b agent.Backend) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	explain := func(err error) error {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s did not answer within %v", b, setupTimeout)
		}
		return err
	}
	if a.model != "" {
		return a.model, explain(b.CheckModel(ctx, a.model))
	}
	names, err := b.ToolModels(ctx)
	if err != nil {
		return "", explain(err)
	}
	why := "the first installed model with tool support"
	if a.api == "openai" {
		why = "the first model the server lists"
	}
	fmt.Fprintf(e.stderr, "moat: using model %s (%s; choose with --model)\n", agent.Sanitize(names[0], false), why)
	return names[0], nil
}

// agentError maps the loop's failures to exit statuses.
func agentError(err error) error {
	switch {
	case errors.Is(err, agent.ErrTurnCap):
		return exitError{code: exitTurnCap, msg: err.Error()}
	case errors.Is(err, context.Canceled):
		return exitError{code: exitFailure, msg: "interrupted"}
	}
	return err
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
