package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/assembly"
)

func askCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat ask", flag.ContinueOnError)
	var a agentFlags
	a.register(fs)
	fs.StringVar(&a.output, "output", outputText, "what standard output gets: text (the answer as it streams), json (one object at the end) or stream-json (one event a line as it happens); schemas in docs/models.md")
	fs.BoolVar(&a.stats, "stats", false, "at the end, write the figures to standard error: tokens read and generated, tokens per second, time to first token (per reply and in all)")
	validate(fs, "output", oneOf(&a.output, outputText, outputJSON, outputStreamJSON))
	return &ffcli.Command{
		Name:       "ask",
		ShortUsage: "moat ask [flags] PROMPT",
		ShortHelp:  "ask one question about the folder",
		LongHelp:   askLongHelp(),
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			prompt, err := askPrompt(e, args)
			if err != nil {
				return err
			}
			return a.ask(ctx, e, prompt)
		},
	}
}

// askLongHelp is moat help ask, the built-in rules included.
func askLongHelp() string {
	return `Puts one question to a local model that can look at the sandbox root through
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

A thinking model's thinking is kept apart from the answer: on a terminal
the waiting line reads "thinking… 12s" while it lasts, then one line says
how long it took; --show-thinking writes it in full, dimmed, to standard
error. A <think> block at the start of the text is thinking too, never
printed as the answer. --think turns thinking on or off, or picks a
level, where the model allows it (a value it does not take is refused,
naming those it does). A tool call the model wrote as text, in a
<tool_call> block, after [TOOL_CALLS] or <|python_tag|>, or as a bare
JSON object naming a tool, is run as a call, and moat says so.

For scripts, --output json writes one object at the end (the answer,
every tool call with its arguments and a short result, every proposal
with its outcome, the figures, why it ended, the exit status), and
--output stream-json one event a line as it happens; docs/models.md
gives both schemas. --stats writes the figures (tokens, tokens per second,
time to first token) to standard error at the end.

PROMPT is the rest of the command line; "-" reads it from standard input.
With no --model, moat picks the first installed model that supports tools
and says which.

Flags may also come after the question (moat ask "what is here?" --root
sub); "--" ends the flags, for a question that starts with a dash.

Exit status: 0 an answer; 1 failure (server unreachable, model missing,
HTTP or stream error, a file or folder a flag names missing or unusable,
or the model's reply was empty again after moat told it so); 2 usage;
3 the model used --max-turns replies without answering;
4 --isolate require and isolation cannot start here; 5 the server cut the
reply off at its length limit (raise --num-ctx or the server's limit);
130 interrupted (Ctrl-C).

Project instructions: --instructions FILE adds a file of yours after the
rules; --agents-md (config key agents-md) adds the root's AGENTS.md, read
through the sandbox and named in the first activity line. AGENTS.md is never
read otherwise: in a folder someone else wrote, it is their text.

The model is told these rules (replace them with --system FILE):

` + indent(agent.SystemPrompt, "  ")
}

// askPrompt is the question the command line gives: its arguments, or
// standard input for "-".
func askPrompt(e *env, args []string) (string, error) {
	if len(args) == 0 {
		return "", usagef("ask needs a question, e.g. moat ask \"What does this project do?\"")
	}
	prompt := strings.Join(args, " ")
	if prompt == "-" {
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return "", fmt.Errorf("reading the question from stdin: %w", err)
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return "", usagef("the question is empty")
	}
	return prompt, nil
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
	inst         instructionFlags
	think        string
	showThinking bool
	rec          recordFlags
	// ask only
	output string
	stats  bool

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
	fs.IntVar(&a.numCtx, "num-ctx", 0, "context window in tokens, sent as num_ctx; tool results and history are kept within it (default: the model's num_ctx parameter, else the context the server runs it with, else $OLLAMA_CONTEXT_LENGTH, else 8192, or 4096 over --api openai to Ollama, which runs the model with its own; at most its trained length)")
	fs.DurationVar(&a.modelTimeout, "model-timeout", 5*time.Minute, "longest wait for one complete model reply (loading a large model counts)")
	fs.StringVar(&a.system, "system", "", "read the system prompt from this `file` instead of using the built-in one")
	fs.StringVar(&a.transcript, "transcript", "", "append every message exchanged to this `file`, one JSON object per line")
	a.inst.register(fs)
	fs.StringVar(&a.think, "think", "", "thinking models: true, false or a `level` (low, medium, high for gpt-oss), passed to the server as it is (default: the model's own)")
	fs.BoolVar(&a.showThinking, "show-thinking", false, "show the model's thinking in full, dimmed, on standard error (default: one line saying how long it thought)")
	a.rec.register(fs)
	validate(fs, "api", oneOf(&a.api, "ollama", "openai"))
	validate(fs, "think", checkThink(&a.think))
	validate(fs, "host", parsedBy(&a.host, agent.ParseHost))
	validate(fs, "max-turns", atLeast(&a.maxTurns, 1, ""))
	validate(fs, "num-ctx", atLeast(&a.numCtx, minNumCtx, "the rules and tool definitions alone take about 1500 tokens"))
	validate(fs, "model-timeout", positive(&a.modelTimeout))
}

// session is one opened conversation: backend, model, sandbox, transcript.
type session struct {
	agent     *agent.Session
	backend   agent.Backend
	model     string
	root      string             // the root's absolute path
	recording *assembly.Recorder // --record, or nil
	cut       *cutter            // stops the streamed text (and thinking) at an interrupt
	closers   []func() error
}

// close reports a transcript that could not be written and closes what the
// session opened. It is also called on a session that failed part way
// through opening, before the conversation (s.agent) existed.
func (s *session) close(stderr io.Writer) {
	if s.agent != nil { // nil when open failed before the conversation started
		if err := s.agent.TranscriptErr(); err != nil {
			fmt.Fprintln(stderr, "moat: writing the transcript:", err)
		}
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// open checks the flags, finds the server and the model (before compiling
// the sandbox, so a missing server is reported at once), opens the
// sandbox (host/assembly) and starts the conversation. command (ask or
// chat) names it in a recording. stream, if not nil, gets the model's
// text as it arrives; obs, if not nil, every event.
func (a *agentFlags) open(ctx context.Context, e *env, command string, stream io.Writer, obs agent.Observer) (*session, error) {
	system, user, err := a.preflight(e)
	if err != nil {
		return nil, err
	}
	b, model, err := a.server(ctx, e)
	if err != nil {
		return nil, err
	}
	s := &session{backend: b, model: model, cut: &cutter{}}
	ok := false
	defer func() {
		if !ok {
			s.close(e.stderr)
		}
	}()
	tr, err := a.openTranscript(e, s)
	if err != nil {
		return nil, err
	}
	o := *a.c.opts(e)
	o.Writes = a.w.options(e, assembly.ModelAtTerminal)
	o.Record = a.recording(command, model, system)
	sb, err := assembly.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, sb.Close)
	s.root, s.recording = assembly.RootsKey(sb.Roots), sb.Recorder
	eng := sb.Engine
	if ins := append(a.inst.workspaceFile(ctx, eng, e.stderr), user...); len(ins) > 0 {
		system = agent.WithInstructions(cmp.Or(system, agent.SystemPrompt), ins...)
	}
	cfg := agent.Config{
		Backend: b, Tools: eng, Model: model, System: system,
		MaxTurns: a.maxTurns, NumCtx: a.numCtx, ReplyTimeout: a.modelTimeout,
		Activity: e.stderr, Stream: s.cut.wrap(stream), Transcript: tr,
		Observer: obs, Think: a.think, Thinking: s.cut.wrap(a.thinkingOut(e)),
	}
	if s.recording != nil {
		cfg = s.recording.Wire(cfg)
	}
	s.agent = agent.New(forTerminal(e, cfg))
	ok = true
	return s, nil
}

// server finds the model server and the model, checks --think against it
// and chooses the context window.
func (a *agentFlags) server(ctx context.Context, e *env) (agent.Backend, string, error) {
	b, _, note, err := modelServer(a.host, a.api, isSet(a.fs, "api"), e.getenv, &http.Client{})
	if err != nil {
		return nil, "", err
	}
	if note != "" {
		fmt.Fprintln(e.stderr, note)
	}
	model, err := a.pickModel(ctx, e, b)
	if err != nil {
		return nil, "", err
	}
	if err := a.checkThink(ctx, b, model); err != nil {
		return nil, "", err
	}
	a.chooseWindow(ctx, e, b, model)
	return b, model, nil
}

// preflight checks what the flags name before any server is asked: the
// sandbox, --record, --system (read: the replacement system prompt, ""
// for the built-in one), --instructions (read: the user's instruction
// files) and --audit.
func (a *agentFlags) preflight(e *env) (system string, user []agent.Instructions, err error) {
	if _, err := a.c.opts(e).Resolve(); err != nil {
		return "", nil, err
	}
	if err := a.rec.check(); err != nil {
		return "", nil, err
	}
	if a.system != "" {
		b, err := os.ReadFile(a.system)
		if err != nil {
			return "", nil, fileError(e.source("system"), a.system, err)
		}
		if system = string(b); strings.TrimSpace(system) == "" {
			return "", nil, failf("--system: %s is empty", a.system)
		}
	}
	if user, err = a.inst.userFiles(e.source("instructions")); err != nil {
		return "", nil, err
	}
	// --audit is refused as --transcript is when its path cannot be one,
	// whether or not this run will offer writes.
	if err := a.w.options(e, assembly.ModelAtTerminal).CheckAudit(); err != nil {
		return "", nil, err
	}
	return system, user, nil
}

// chooseWindow sets the context window: --num-ctx, else the model's (or
// the default), and says where it came from (numCtxWhy).
func (a *agentFlags) chooseWindow(ctx context.Context, e *env, b agent.Backend, model string) {
	if a.numCtx != 0 {
		a.numCtxWhy = "--num-ctx"
		return
	}
	wctx, cancel := context.WithTimeout(ctx, setupTimeout)
	w, known, _ := windowOf(wctx, b, model) // unknown: the default
	cancel()
	a.numCtx, a.numCtxWhy = contextWindow(w, known, e.getenv)
}

// openTranscript opens --transcript for appending, closed with s; nil
// without the flag.
func (a *agentFlags) openTranscript(e *env, s *session) (io.Writer, error) {
	if a.transcript == "" {
		return nil, nil
	}
	f, err := os.OpenFile(a.transcript, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fileError(e.source("transcript"), a.transcript, err)
	}
	s.closers = append(s.closers, f.Close)
	return f, nil
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

// checkThink refuses a --think value the model does not take, naming
// those it does, where the server can tell before the first request
// (Ollama's /api/show: a model that cannot think); otherwise the server's
// own refusal is explained when it comes.
func (a *agentFlags) checkThink(ctx context.Context, b agent.Backend, model string) error {
	tc, ok := b.(agent.ThinkChecker)
	if a.think == "" || !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	vals, err := tc.ThinkValues(ctx, model)
	if err != nil || vals == nil || slices.Contains(vals, a.think) {
		return err
	}
	name := agent.Sanitize(model, false)
	if len(vals) == 1 {
		return failf("--think %s: model %s does not think; it takes only --think %s (or leave --think out)", a.think, name, vals[0])
	}
	return failf("--think %s: model %s takes --think %s", a.think, name, strings.Join(vals, ", "))
}

func (a *agentFlags) thinkingOut(e *env) io.Writer {
	if !a.showThinking {
		return nil
	}
	return thinkingOut(e)
}

// agentError maps the loop's failures to exit statuses.
func agentError(err error) error {
	switch {
	case errors.Is(err, agent.ErrTurnCap):
		return exitError{code: exitTurnCap, msg: err.Error()}
	case errors.Is(err, agent.ErrCutOff):
		return exitError{code: exitCutOff, msg: err.Error()}
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
