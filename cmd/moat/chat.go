package main

import (
	"bufio"
	"bytes"
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
	"unicode/utf8"

	"github.com/peterbourgon/ff/v3/ffcli"
	"golang.org/x/term"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/toolspec"
)

func chatCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat chat", flag.ContinueOnError)
	var a agentFlags
	a.register(fs)
	var sf sessionFlags
	sf.register(fs)
	return &ffcli.Command{
		Name:       "chat",
		ShortUsage: "moat chat [flags]",
		ShortHelp:  "talk with a model about the folder",
		LongHelp: `An interactive conversation with a local model that can look at the sandbox
root through moat's tools. Replies stream as they arrive; tool calls are
shown on standard error as in 'moat ask'.

On a terminal you get line editing and history, replies wrapped to the
window, and a count of the seconds waited while the model loads. Ctrl-C
stops the reply being written (the conversation goes on) or clears the
line being typed; Ctrl-D, /exit or Ctrl-C at an empty prompt leaves.
When standard input is not a terminal, each line is one question, so a
conversation can be piped in.

Lines that start with a slash and a word are commands for moat, never
sent to the model:
  /help    the commands
  /tools   the tools the model can use, one line each
  /stats   the figures of the last question and of the session
  /clear   forget the conversation and start over
  /exit    leave

After a turn in which the model proposed changes, moat says how many
were written ("moat: 2 changes proposed, 1 written"). Thinking is shown
as in 'moat ask' (--think, --show-thinking); /stats gives the figures.

When the model uses all --max-turns replies on a question without
answering, moat asks whether to give it as many again (at a terminal;
piped, the turn ends with the message and the next line is read).

The whole session shares one sandbox and one conversation: the model
remembers earlier questions until the context window (--num-ctx) forces
the oldest tool results out. Run 'moat help ask' for the rules the model
is given.

--continue goes on with the latest saved session of this root, --resume ID
with the one named (moat sessions lists them); a session is resumed only in
the root it was made in. /clear starts a new session.

` + sessionsHelp + `

Exit status: 0 when the session ends (a failed turn is reported and the
session goes on), 1 when it cannot start (no server, no model, no session
to continue or resume, a session of another root, a damaged session file)
or, with questions piped in, when any of them got no answer (5 when each
of those was a reply the server cut off at its length limit); 2 for a
usage error, 4 when --isolate require and isolation cannot start here.`,
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("chat takes no arguments; for one question use moat ask PROMPT")
			}
			return a.chat(ctx, e, &sf)
		},
	}
}

// chat runs the session. Interrupts are handled here rather than by run's
// context: Ctrl-C must cancel the running reply, not the session, so the
// session's context does not inherit run's cancellation.
func (a *agentFlags) chat(ctx context.Context, e *env, sf *sessionFlags) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	sctx, endSession := context.WithCancel(context.WithoutCancel(ctx))
	defer endSession()
	turns := &turnCancel{}
	go turns.watch(sctx, sigs, endSession)

	plan, err := a.c.opts(e).Resolve()
	if err != nil {
		return err
	}
	rec, prior, err := sf.start(e, plan.Runner.Dirs())
	if err != nil {
		return err
	}
	if prior != nil && a.model == "" {
		a.model = prior.Model // the model it was held with, unless told otherwise
	}
	in := newLineReader(e)
	defer in.close()
	s, err := a.open(sctx, e, "chat", in.out, nil)
	if err != nil {
		return err
	}
	defer s.close(e.stderr)
	if prior != nil {
		s.agent.Resume(prior.Messages)
	}
	rec.noteStart(e.stderr, prior)
	if in.interactive {
		defer rec.noteEnd(e.stderr)
	}
	if in.interactive {
		fmt.Fprintf(e.stderr, "moat chat: %s on %s, root %s\ncontext window %d tokens (%s)\n/help lists the commands. Ctrl-C stops a reply; Ctrl-D or /exit leaves.\n",
			agent.Sanitize(s.model, false), s.backend, agent.Sanitize(s.root, false), a.numCtx, a.numCtxWhy)
	}
	c := &chatLoop{e: e, ctx: sctx, s: s, rec: rec, in: in, turns: turns}
	return c.run()
}

// turnCancel is what a signal does to a chat: Ctrl-C (SIGINT) stops the
// turn under way, if there is one; SIGTERM, or SIGINT between turns, ends
// the session.
type turnCancel struct {
	mu     sync.Mutex
	cancel context.CancelFunc // nil between turns
}

// watch acts on sigs until ctx ends.
func (t *turnCancel) watch(ctx context.Context, sigs <-chan os.Signal, endSession context.CancelFunc) {
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-sigs:
			t.mu.Lock()
			if sig == os.Interrupt && t.cancel != nil {
				t.cancel()
			} else {
				endSession()
			}
			t.mu.Unlock()
		}
	}
}

// set makes cancel the turn's (nil: between turns).
func (t *turnCancel) set(cancel context.CancelFunc) {
	t.mu.Lock()
	t.cancel = cancel
	t.mu.Unlock()
}

// chatLoop is one chat session's questions, read until the person leaves.
type chatLoop struct {
	e     *env
	ctx   context.Context // the session's: ends at SIGTERM
	s     *session
	rec   *recorder
	in    *lineReader
	turns *turnCancel
	// Piped, a script reads the exit status: it says whether every
	// question got an answer.
	asked, failed, cut int
}

// run reads and answers lines until the input ends or the session does.
func (c *chatLoop) run() error {
	lines := make(chan lineResult, 1)
	for {
		go func() {
			l, err := c.in.readLine()
			lines <- lineResult{l, err}
		}()
		var lr lineResult
		select {
		case lr = <-lines:
		case <-c.ctx.Done():
			return nil
		}
		if lr.err == io.EOF || lr.err == errInterrupt {
			c.in.endLine() // Ctrl-D or Ctrl-C left the cursor after the prompt
			return c.ended()
		}
		if lr.err != nil {
			return fmt.Errorf("reading input: %w", lr.err)
		}
		q := strings.TrimSpace(lr.line)
		if q == "" {
			continue
		}
		if name, rest, ok := slashCommand(q); ok {
			if quit := runChatCommand(c.e.stderr, c.s.agent, name, rest); quit {
				return nil
			}
			if name == "/clear" && rest == "" {
				c.rec.restart()
			}
			continue
		}
		if stop := c.question(q); stop {
			return nil
		}
	}
}

// ended is the exit status of a session whose input ended.
func (c *chatLoop) ended() error {
	if c.in.interactive || c.failed == 0 {
		return nil
	}
	code := exitFailure
	if c.cut == c.failed {
		code = exitCutOff // every failure was a reply the server cut off
	}
	return exitError{code: code, msg: fmt.Sprintf("%d of %d questions got no answer (see above)", c.failed, c.asked)}
}

// question puts q to the model; stop says the session ended meanwhile.
func (c *chatLoop) question(q string) (stop bool) {
	e, s := c.e, c.s
	c.asked++
	err := c.turn(func(ctx context.Context) (string, error) { return s.agent.Ask(ctx, q) })
	// At the turn cap, a person at the terminal may give the model
	// more turns on the same question.
	for errors.Is(err, agent.ErrTurnCap) && c.in.interactive {
		n := s.agent.MaxTurns()
		yes, aerr := c.in.confirm(c.ctx, fmt.Sprintf("No answer after %d turns (--max-turns). %d more? [y/N] ", n, n))
		if aerr != nil || !yes {
			err = nil
			if aerr == nil {
				fmt.Fprintln(e.stderr, "moat: stopped; what it found stays in the conversation")
			}
			break
		}
		s.recording.Continued()
		err = c.turn(s.agent.Continue)
	}
	if err != nil {
		c.failed++
	}
	if errors.Is(err, agent.ErrCutOff) {
		c.cut++
	}
	switch {
	case err == nil:
	case c.ctx.Err() != nil:
		return true
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(e.stderr, "moat: reply stopped; the question was left out of the conversation")
	default:
		// The session goes on: the server may come back, and a
		// turn-cap's findings stay in the history.
		fmt.Fprintln(e.stderr, "moat:", err)
	}
	return false
}

// turn runs one turn of the model's, which Ctrl-C stops, and saves the
// session after it.
func (c *chatLoop) turn(run func(context.Context) (string, error)) error {
	e, s := c.e, c.s
	tctx, cancel := context.WithCancel(c.ctx)
	c.turns.set(cancel)
	s.agent.SetWidth(terminalWidth(e.stdout)) // the window may have been resized
	// At Ctrl-C nothing more of the reply is printed.
	uncut := s.cut.bind(tctx)
	answer, err := run(tctx)
	uncut()
	s.recording.Finish(answer, err)
	c.turns.set(nil)
	cancel()
	reportChanges(e.stderr, s.agent)
	c.rec.save(e.stderr, s.agent, s.model)
	return err
}

// slashCommand recognises a command: a slash and a word, alone or followed
// by text. A line whose first word has more in it, such as a path
// ("/etc/hosts: what is it?"), is a question.
func slashCommand(q string) (name, rest string, ok bool) {
	word, rest, _ := strings.Cut(q, " ")
	if len(word) < 2 || word[0] != '/' {
		return "", "", false
	}
	for _, r := range word[1:] {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return "", "", false
		}
	}
	return word, strings.TrimSpace(rest), true
}

// chatHelp is what /help prints.
const chatHelp = `Commands:
  /help    this list
  /tools   the tools the model can use
  /stats   tokens, tokens per second and waits: last question, session
  /clear   forget the conversation and start over
  /exit    leave (so does Ctrl-D, or Ctrl-C at an empty prompt)
Anything else is a question for the model. Ctrl-C stops a reply, or clears
the line being typed.
`

// runChatCommand runs one command, writing what it has to say to w, and
// reports whether the session should end. Commands never reach the model.
func runChatCommand(w io.Writer, s *agent.Session, name, rest string) (quit bool) {
	switch name {
	case "/help", "/tools", "/stats", "/clear", "/exit", "/quit":
	default:
		fmt.Fprintf(w, "moat: unknown command %s; /help lists the commands (a question may not start with /word)\n", agent.Sanitize(name, false))
		return false
	}
	if rest != "" && name != "/help" {
		fmt.Fprintf(w, "moat: %s takes nothing after it\n", name)
		return false
	}
	switch name {
	case "/help":
		io.WriteString(w, chatHelp)
	case "/tools":
		writeTools(w, s.Tools())
	case "/stats":
		writeChatStats(w, s)
	case "/clear":
		s.Clear()
		fmt.Fprintln(w, "moat: conversation cleared; the next question starts a new one")
	default: // exit, quit
		return true
	}
	return false
}

// writeTools lists the tools with the first sentence of each description.
func writeTools(w io.Writer, tools []*toolspec.Tool) {
	width, writes := 0, false
	for _, t := range tools {
		width = max(width, len(t.Name))
		writes = writes || t.Write
	}
	fmt.Fprintln(w, "Tools the model can use:")
	for _, t := range tools {
		fmt.Fprintf(w, "  %-*s  %s\n", width, t.Name, firstSentence(t.Description))
	}
	if !writes {
		fmt.Fprintln(w, "It cannot propose changes in this session (--writes deny).")
	}
}

// firstSentence cuts a description at its first full stop or semicolon.
func firstSentence(d string) string {
	if i := strings.IndexAny(d, ".;"); i >= 0 && (i+1 == len(d) || d[i+1] == ' ') {
		return d[:i] + "."
	}
	if i := strings.Index(d, ". "); i >= 0 {
		return d[:i+1]
	}
	return d
}

type lineResult struct {
	line string
	err  error
}

// lineReader reads questions: through golang.org/x/term (line editing,
// history) when stdin is a terminal, plainly otherwise.
type lineReader struct {
	interactive bool
	out         io.Writer   // where replies stream
	stdin       *os.File    // the terminal the keys come from, when interactive
	saved       *term.State // the terminal's state at start, restored on close
	t           *term.Terminal
	echo        io.Writer // where the prompt and the typed line are drawn
	plain       *bufio.Reader
	tty         *os.File // /dev/tty opened for the prompt, if any
}

func newLineReader(e *env) *lineReader {
	r := &lineReader{out: e.stdout}
	var st *term.State
	var err error
	if onTerminal(e.stdin, func(fd int) { st, err = term.GetState(fd) }) && err == nil {
		r.interactive, r.stdin, r.saved = true, e.stdin.(*os.File), st
		r.echo = r.echoTo(e.stdout)
		r.t = newEditor(e.stdin, r.echo)
		return r
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
	var old *term.State
	err := errors.New("standard input is no longer a terminal")
	onTerminal(r.stdin, func(fd int) { old, err = term.MakeRaw(fd) })
	if err != nil {
		return "", err
	}
	defer onTerminal(r.stdin, func(fd int) { term.Restore(fd, old) })
	return r.t.ReadLine() // io.EOF on Ctrl-D, errInterrupt on Ctrl-C at an empty prompt
}

// confirm asks a yes-or-no question at the prompt, in place of "moat> ";
// anything but y or yes is no, as is Ctrl-C or Ctrl-D. An error means the
// session is ending.
func (r *lineReader) confirm(ctx context.Context, question string) (bool, error) {
	r.t.SetPrompt(question)
	defer r.t.SetPrompt(chatPrompt)
	ch := make(chan lineResult, 1)
	go func() {
		l, err := r.readLine()
		ch <- lineResult{l, err}
	}()
	select {
	case lr := <-ch:
		if lr.err != nil {
			r.endLine()
			return false, nil
		}
		a := strings.ToLower(strings.TrimSpace(lr.line))
		return a == "y" || a == "yes", nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// endLine moves to a new line after the prompt when the session ends at
// it, so the shell's prompt does not follow moat's on the same line.
func (r *lineReader) endLine() {
	if r.interactive {
		io.WriteString(r.echo, "\n")
	}
}

// chatPrompt is the prompt for a question.
const chatPrompt = "moat> "

// errInterrupt ends the input: Ctrl-C at an empty prompt.
var errInterrupt = errors.New("interrupted at the prompt")

// keyInterrupt stands for Ctrl-C on its way to the editor: a private-use
// character no terminal sends, so only interruptKeys produces it.
const keyInterrupt = '\ue003'

// newEditor returns the line editor for a terminal: golang.org/x/term's,
// except that Ctrl-C clears a half-typed line instead of ending the input,
// and ends it only at an empty prompt (as in most shells and REPLs).
// term.Terminal treats Ctrl-C as end of input before any callback can see
// it, so the key is renamed on the way in (see interruptKeys) and handled
// in AutoCompleteCallback, which sees the line as it stands.
func newEditor(in io.Reader, echo io.Writer) *term.Terminal {
	keys := &interruptKeys{r: in}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, echo}, chatPrompt)
	t.AutoCompleteCallback = func(line string, pos int, key rune) (string, int, bool) {
		if key != keyInterrupt {
			return "", 0, false
		}
		if line == "" {
			keys.quit = true // the editor's next read ends the input
		}
		return "", 0, true
	}
	return t
}

// interruptKeys passes keys to the editor, each Ctrl-C (0x03) alone and
// renamed keyInterrupt. Delivering it alone means the editor has handled
// every earlier key when it sees it, so the callback judges the right line.
type interruptKeys struct {
	r    io.Reader
	buf  []byte // read, not yet passed on
	quit bool   // set by the callback: end the input at the next read
}

func (k *interruptKeys) Read(p []byte) (int, error) {
	if k.quit {
		k.quit = false
		return 0, errInterrupt
	}
	if len(k.buf) == 0 {
		b := make([]byte, max(len(p), 64))
		n, err := k.r.Read(b)
		if n == 0 {
			return 0, err
		}
		k.buf = b[:n]
	}
	if k.buf[0] == 0x03 && len(p) >= utf8.UTFMax {
		k.buf = k.buf[1:]
		return utf8.EncodeRune(p, keyInterrupt), nil
	}
	n := len(k.buf)
	if i := bytes.IndexByte(k.buf, 0x03); i > 0 {
		n = i
	} else if i == 0 {
		n = 1 // no room for keyInterrupt (never with term.Terminal's buffer): pass Ctrl-C on as it is
	}
	n = copy(p, k.buf[:n])
	k.buf = k.buf[n:]
	return n, nil
}

// echoTo picks where the prompt and the line being edited are drawn: the
// terminal the keys come from. That is stdout when it is a terminal too;
// when stdout is redirected (moat chat > answers.txt), the controlling
// terminal, so the file gets only the replies.
func (r *lineReader) echoTo(stdout io.Writer) io.Writer {
	if isTerminal(stdout) {
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
		onTerminal(r.stdin, func(fd int) { term.Restore(fd, r.saved) })
	}
	if r.tty != nil {
		r.tty.Close()
	}
}
