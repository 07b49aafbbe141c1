package recording

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/atomicfile"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/scripted"
	"github.com/moatdev/moat/host/toolspec"
)

// DefaultMaxBytes bounds a recording unless the caller says otherwise:
// far more than a session's tool results at the default read limit, small
// enough to keep in a repository.
const DefaultMaxBytes = 16 << 20

// ErrTooLarge: the recording outgrew its bound and was not written.
var ErrTooLarge = errors.New("recording: too large")

// Options configure a Recorder.
type Options struct {
	// Session holds the settings that change behaviour; the recorder
	// fills in the questions and turns.
	Session SessionInfo
	// Root is the sandbox root's absolute path. The gate names files by
	// their absolute path; reviews are recorded with it written as
	// "<root>", so a recording neither holds nor depends on where the
	// folder was.
	Root string
	// Roots, when there are several, are the roots with their labels
	// (Root is then unused): each is written "<root>/LABEL", and Files
	// names their files LABEL/path.
	Roots []confine.Dir
	// Version is moat's version, for the archive's comment.
	Version string
	// Flags is the command line's behaviour flags, for the comment.
	Flags string
	// Files, when set (--record-files), is the root as the tools see it:
	// the confined filesystem (host/confine), which resolves every path
	// beneath the root, refuses denied names on every component and link
	// target, and leaves them out of listings, and (unless
	// --redact=false) serves each file's redacted view, so a recorded
	// file holds the marks the model saw, never the secrets. Every file a
	// call opened, every folder it listed and every path it described, as
	// the guest's own mount observed them (confine.Observer), is taken
	// from it once the call returned. Policy is its deny-list, checked
	// again on every path taken.
	Files  fs.FS
	Policy *policy.Policy
	// MaxBytes bounds the archive's texts and files; 0 is
	// DefaultMaxBytes. Past it the recorder says so on Notes once and
	// keeps nothing more: Bytes then fails with ErrTooLarge.
	MaxBytes int64
	Notes    io.Writer
}

// Recorder records one session. Its wrappers may be called from the
// goroutines the agent loop uses; it serialises them.
type Recorder struct {
	opt   Options
	root  fs.FS      // Options.Files
	roots []rootForm // the root's (or roots') absolute forms and their tokens

	mu      sync.Mutex
	rec     Recording
	history []agent.Message // the conversation, as the transcript shows it
	system  int             // system messages seen (a later one is a /clear)
	clear   bool            // the next question follows a /clear
	mark    mark            // where the question in progress started
	cont    *mark           // where its continuation started, during one
	files   map[string]int  // path -> index in rec.Files; -1: known absent
	listed  map[string]bool // folders whose names were taken
	size    int64
	top     []contrib // the largest parts, for the message at the bound
	over    bool
	dropped int // interrupted questions left out
}

type mark struct{ turns, calls, history, script int }

// New starts a recording.
func New(opt Options) (*Recorder, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.Notes == nil {
		opt.Notes = io.Discard
	}
	r := &Recorder{opt: opt, files: map[string]int{}, listed: map[string]bool{}, roots: formsOf(opt.Root, opt.Roots)}
	r.rec.Session = opt.Session
	if len(opt.Roots) > 1 {
		r.rec.Session.Roots = nil
		for _, d := range opt.Roots {
			r.rec.Session.Roots = append(r.rec.Session.Roots, d.Label)
		}
	}
	r.rec.Session.Files = opt.Files != nil
	r.rec.Session.Questions, r.rec.Session.Turns = nil, nil
	r.rec.Script = scripted.Script{Models: []scripted.Model{{Name: opt.Session.Model, Tools: true}}, Turns: []scripted.Turn{}}
	if opt.Files != nil {
		if opt.Policy == nil {
			return nil, errors.New("recording: Files needs the Policy")
		}
		r.root = opt.Files
	}
	return r, nil
}

// grow counts n more bytes of what (a file, a call) against the bound and
// reports whether they fit.
func (r *Recorder) grow(n int, what string) bool {
	if r.over {
		return false
	}
	r.size += int64(n)
	r.note(what, n)
	if r.size <= r.opt.MaxBytes {
		return true
	}
	r.overflow(r.size)
	return false
}

// overflow drops the recording and says so, once: how large it grew, and
// its largest parts.
func (r *Recorder) overflow(size int64) {
	r.over = true
	r.rec = Recording{} // keep nothing more
	fmt.Fprintf(r.opt.Notes, "moat: the recording is larger than --record-max-bytes (%d bytes): it reached %d bytes", r.opt.MaxBytes, size)
	if l := r.largest(); l != "" {
		fmt.Fprintf(r.opt.Notes, "; the largest parts: %s", l)
	}
	fmt.Fprintf(r.opt.Notes, "; it will not be written: raise the bound or record a shorter session\n")
}

// Backend wraps the model server: every reply becomes a turn of the fake
// server's script.
func (r *Recorder) Backend(b agent.Backend) agent.Backend { return &recBackend{b, r} }

type recBackend struct {
	agent.Backend
	r *Recorder
}

func (b *recBackend) Chat(ctx context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Message, agent.Usage, error) {
	reply, usage, err := b.Backend.Chat(ctx, req, onDelta)
	b.r.turn(req, reply, usage, err)
	return reply, usage, err
}

// turn records one reply as the server sent it, before the loop reads it:
// thinking, text, and the calls that came as calls (a call written as
// text stays text, and the replay recovers it again).
func (r *Recorder) turn(req agent.Request, reply agent.Message, usage agent.Usage, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	info := Turn{Question: len(r.rec.Session.Questions), Messages: len(req.Messages)}
	for i, m := range req.Messages {
		if i < len(r.history) && !sameMessage(m, r.history[i]) {
			info.Dropped = append(info.Dropped, i)
		}
	}
	t := scripted.Turn{Thinking: reply.Thinking, Text: reply.Content, PromptTokens: usage.PromptTokens, EvalCount: usage.OutputTokens}
	if usage.DoneReason == "length" {
		t.DoneReason = "length" // replayed as cut off again
	}
	if err != nil {
		// Replayed as a server failure; which failure it was is not
		// replayed (only that the question failed).
		t = scripted.Turn{Fail: "http500"}
	}
	n := len(t.Thinking) + len(t.Text)
	for _, c := range reply.ToolCalls {
		call := scripted.Call{ID: c.ID, NoID: c.ID == "", Name: c.Name}
		call.Args, call.RawArgs = compactArgs(relArgs(c.Name, c.Arguments, r.roots))
		t.Calls = append(t.Calls, call)
		n += len(c.Name) + len(c.Arguments)
	}
	if !r.grow(n, fmt.Sprintf("model reply %d", len(r.rec.Script.Turns)+1)) {
		return
	}
	r.rec.Script.Turns = append(r.rec.Script.Turns, t)
	r.rec.Session.Turns = append(r.rec.Session.Turns, info)
}

func sameMessage(a, b agent.Message) bool {
	if a.Content != b.Content || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i] != b.ToolCalls[i] {
			return false
		}
	}
	return true
}

// Tools wraps the engine: every call and the exact text it returned.
func (r *Recorder) Tools(d agent.Dispatcher) agent.Dispatcher { return &recTools{d, r} }

type recTools struct {
	agent.Dispatcher
	r *Recorder
}

func (t *recTools) Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	r := t.r
	var before *File // a write's target as it was, kept if the gate showed it
	r.mu.Lock()
	sl := &slot{index: len(r.rec.Calls)}
	if r.root != nil && isWrite(name) {
		before = r.read(r.relPath(pathArg(args)))
	}
	r.mu.Unlock()
	// The gate passes the call's context on to the reviewer, which puts
	// the review in this call's slot: calls that run at once (MCP) keep
	// their own.
	ctx = context.WithValue(ctx, slotKey{}, sl)
	var touched *confine.Touches
	if r.root != nil && !isWrite(name) {
		// Whatever the call opens, lists or describes, as the guest's
		// mount sees it, whichever tool it is (and in the isolated
		// child too: its client brings the touches back).
		touched = &confine.Touches{}
		ctx = confine.WithObserver(ctx, touched)
	}
	res := t.Dispatcher.Call(ctx, name, args)
	r.mu.Lock()
	defer r.mu.Unlock()
	rv := sl.review
	if before != nil && rv != nil {
		// The gate checked the path (no link, not denied, a regular
		// file) and showed the file's content in the diff.
		r.keep(*before)
	}
	if touched != nil {
		// An error's answer may depend on the file too (read_file of a
		// binary file says what kind it is).
		for _, tc := range touched.List() {
			r.captureTouch(tc)
		}
	}
	text := res.Text
	if res.IsError {
		// An error names the path as the call gave it (an absolute one,
		// maybe); an answer's content is left as the file has it.
		text = relText(text, r.roots)
	}
	n := len(name) + len(args) + len(text)
	if rv != nil {
		for _, l := range rv.Lines {
			n += len(l) + 1
		}
	}
	if !r.grow(n, fmt.Sprintf("call %d (%s)", len(r.rec.Calls)+1, agent.Sanitize(name, false))) {
		return res
	}
	turn := len(r.rec.Script.Turns)
	if r.rec.Session.Command == "mcp" {
		turn = len(r.rec.Calls) + 1 // each client request is a turn of its own
	}
	r.rec.Calls = append(r.rec.Calls, Call{Turn: turn, Tool: name, Args: relArgs(name, string(args), r.roots), Error: res.IsError, Text: text, Review: rv})
	return res
}

// relPath is a path argument as the root-relative path the engine maps it
// to (an absolute path inside the root), else as it is.
func (r *Recorder) relPath(p string) string {
	for _, f := range r.roots {
		label := strings.TrimPrefix(strings.TrimPrefix(f.token, rootToken), "/")
		if p == f.abs {
			return path.Join(".", label)
		}
		if rest, ok := strings.CutPrefix(p, f.abs+string(filepath.Separator)); ok {
			return path.Join(label, filepath.ToSlash(rest))
		}
	}
	return p
}

// isWrite reports whether the named tool is a write proposal.
func isWrite(name string) bool { return proto.ToolIs(name, proto.Writes) }

// pathArg is a call's "path" argument, "." when it has none (as the
// tools read it), "" when the arguments are not an object.
func pathArg(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	if s, _ := m["path"].(string); s != "" {
		return s
	}
	return "."
}

// reviewLine is a line of a review's header with the root's (or each
// root's) absolute path as the gate gave it written as its token.
func (r *Recorder) reviewLine(l string) string {
	if r.opt.Root != "" {
		return strings.ReplaceAll(l, r.opt.Root+string(filepath.Separator), rootToken+"/")
	}
	for _, d := range r.opt.Roots {
		l = strings.ReplaceAll(l, d.Path+string(filepath.Separator), rootToken+"/"+d.Label+"/")
	}
	return l
}

// rootToken stands for the root's absolute path in a recorded review.
const rootToken = "<root>"

// ansiSGR matches the gate's own colours, the only escape sequences in a
// Review (everything untrusted in it is shown escaped), so that a
// recording does not depend on the terminal it was made at.
var ansiSGR = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Reviewer wraps the gate's reviewer: the review shown and the decision.
func (r *Recorder) Reviewer(inner gate.Reviewer) gate.Reviewer { return &recReviewer{inner, r} }

type recReviewer struct {
	inner gate.Reviewer
	r     *Recorder
}

func (v *recReviewer) Review(ctx context.Context, rv *gate.Review) gate.Verdict {
	verdict := v.inner.Review(ctx, rv)
	var lines []string
	for i, l := range append(append([]string(nil), rv.Header...), rv.Diff...) {
		l = ansiSGR.ReplaceAllString(l, "")
		if i < len(rv.Header) {
			l = v.r.reviewLine(l)
		}
		lines = append(lines, l)
	}
	if sl, ok := ctx.Value(slotKey{}).(*slot); ok {
		v.r.mu.Lock()
		sl.review = &Review{Lines: lines, Header: len(rv.Header), Outcome: outcomeName(verdict.Outcome), Reason: verdict.Reason}
		v.r.mu.Unlock()
	}
	return verdict
}

// Report passes a written or refused change on to a reviewer that shows
// it (the terminal).
func (v *recReviewer) Report(rv *gate.Review, msg string) {
	if rep, ok := v.inner.(gate.Reporter); ok {
		rep.Report(rv, msg)
	}
}

// outcomes are the decisions, in the words of the archive.
func outcomes() map[gate.Outcome]string {
	return map[gate.Outcome]string{
		gate.Approved: "approved", gate.Declined: "declined", gate.Unanswered: "unanswered",
		gate.TooLarge: "too_large", gate.Unavailable: "unavailable", gate.Failed: "failed", gate.Cancelled: "cancelled",
	}
}

func outcomeName(o gate.Outcome) string {
	if n, ok := outcomes()[o]; ok {
		return n
	}
	return fmt.Sprintf("invalid(%d)", o)
}

func parseOutcome(s string) (gate.Outcome, bool) {
	for o, n := range outcomes() {
		if n == s {
			return o, true
		}
	}
	return 0, false
}

// Transcript returns the writer for the agent's transcript: it follows
// the conversation (questions, /clear, what the model was sent of each
// result) and passes every line on to w, which may be nil.
func (r *Recorder) Transcript(w io.Writer) io.Writer { return &recTranscript{w, r} }

type recTranscript struct {
	w io.Writer
	r *Recorder
}

func (t *recTranscript) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		var m agent.Message
		if json.Unmarshal(line, &m) == nil {
			t.r.message(m)
		}
	}
	if t.w == nil {
		return len(p), nil
	}
	return t.w.Write(p)
}

func (r *Recorder) message(m agent.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m.Role {
	case "system":
		r.system++
		r.clear = r.system > 1
		r.history = []agent.Message{m}
		return
	case "user":
		if m.FromMoat {
			break // the loop's own note to the model, not a question
		}
		if !r.grow(len(m.Content), fmt.Sprintf("question %d", len(r.rec.Session.Questions)+1)) {
			return
		}
		r.mark = mark{turns: len(r.rec.Session.Turns), calls: len(r.rec.Calls), history: len(r.history), script: len(r.rec.Script.Turns)}
		r.rec.Session.Questions = append(r.rec.Session.Questions, Question{Clear: r.clear, Text: m.Content})
		r.clear = false
	case "tool":
		content := m.Content
		if n := len(r.rec.Calls); n > 0 && r.rec.Calls[n-1].Error {
			content = relText(content, r.roots) // as the call's text
		}
		if n := len(r.rec.Calls); n > 0 && r.rec.Calls[n-1].Text != content && r.rec.Calls[n-1].Sent == nil {
			if r.grow(len(content), fmt.Sprintf("call %d (what the model was sent)", n)) {
				r.rec.Calls[n-1].Sent = &content
			}
		}
	}
	r.history = append(r.history, m)
}

// Continued records that the question that ended at the turn cap goes
// on (agent.Session.Continue); the next Finish says how it ended.
func (r *Recorder) Continued() {
	r.mu.Lock()
	defer r.mu.Unlock()
	qs := r.rec.Session.Questions
	if r.over || len(qs) == 0 {
		return
	}
	qs[len(qs)-1].Continues++
	r.cont = &mark{turns: len(r.rec.Session.Turns), calls: len(r.rec.Calls), history: len(r.history), script: len(r.rec.Script.Turns)}
}

// Finish records how the question in progress ended. An interrupted
// question is left out of the recording: its replies never completed. An
// interrupted continuation is left out, and the question ends at the turn
// cap as before it.
func (r *Recorder) Finish(answer string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	qs := r.rec.Session.Questions
	if r.over || len(qs) == 0 {
		return
	}
	q := &qs[len(qs)-1]
	start := r.mark
	if r.cont != nil {
		start = *r.cont
		r.cont = nil
		if errors.Is(err, context.Canceled) {
			q.Continues--
			r.rollback(start)
			return
		}
	}
	switch {
	case err == nil:
		q.Outcome, q.Answer = Answered, answer
	case errors.Is(err, context.Canceled):
		r.rec.Session.Questions = qs[:len(qs)-1]
		r.rollback(start)
		r.dropped++
		return
	case errors.Is(err, agent.ErrTurnCap):
		q.Outcome, q.Error = TurnCap, err.Error()
	case errors.Is(err, agent.ErrContextFull):
		q.Outcome, q.Error = ContextFull, err.Error()
	default:
		q.Outcome, q.Error = Failed, err.Error()
	}
	if err != nil && !errors.Is(err, agent.ErrTurnCap) {
		r.history = r.history[:start.history] // the loop took the question (or continuation) out
	}
}

// rollback forgets what was recorded since m.
func (r *Recorder) rollback(m mark) {
	r.rec.Session.Turns = r.rec.Session.Turns[:m.turns]
	r.rec.Calls = r.rec.Calls[:m.calls]
	r.rec.Script.Turns = r.rec.Script.Turns[:m.script]
	r.history = r.history[:m.history]
}

// Recording returns a copy of what was recorded so far.
func (r *Recorder) Recording() (*Recording, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, r.opt.MaxBytes)
	}
	rec := r.rec
	rec.Comment = r.comment()
	rec.Session.Questions = append([]Question(nil), rec.Session.Questions...)
	rec.Calls = append([]Call(nil), rec.Calls...)
	rec.Files = append([]File(nil), rec.Files...)
	return &rec, nil
}

// Bytes is the archive so far. The bound applies to it whole, beyond
// the texts and files counted as they came.
func (r *Recorder) Bytes() ([]byte, error) {
	rec, err := r.Recording()
	if err != nil {
		return nil, err
	}
	b, err := Encode(rec)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > r.opt.MaxBytes {
		r.mu.Lock()
		if !r.over {
			if extra := int64(len(b)) - r.size; extra > 0 {
				r.note("the archive's own headers", int(extra))
			}
			r.overflow(int64(len(b)))
		}
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, r.opt.MaxBytes)
	}
	return b, nil
}

// slot is one call in progress: its index among the calls, and the
// review the gate showed for it.
type slot struct {
	index  int
	review *Review
}

type slotKey struct{}

// callIndex is the index of the call in progress in ctx (through the
// Recorder's Tools), -1 outside one.
func callIndex(ctx context.Context) int {
	if sl, ok := ctx.Value(slotKey{}).(*slot); ok {
		return sl.index
	}
	return -1
}

func (r *Recorder) comment() string {
	s := r.rec.Session
	var b strings.Builder
	fmt.Fprintf(&b, "# moat recording: moat %s, made with moat %s\n", s.Command, oneLine(r.opt.Version))
	if s.Command == "mcp" {
		fmt.Fprintf(&b, "# an MCP client's session: %s\n", plural(len(r.rec.Calls), "tool call", "tool calls"))
	} else {
		fmt.Fprintf(&b, "# model %s over the %s API; %s, %s, %s\n", oneLine(s.Model), s.API,
			plural(len(s.Questions), "question", "questions"), plural(len(r.rec.Script.Turns), "model reply", "model replies"), plural(len(r.rec.Calls), "tool call", "tool calls"))
	}
	if r.opt.Flags != "" {
		fmt.Fprintf(&b, "# flags: %s\n", oneLine(r.opt.Flags))
	}
	if s.Files {
		b.WriteString("# with --record-files: the files the calls opened, listed and described are under root/\n")
	} else {
		b.WriteString("# without --record-files: replay needs the root, as it was: moat replay FILE --root DIR\n")
	}
	if r.dropped > 0 {
		fmt.Fprintf(&b, "# %d interrupted question(s) left out\n", r.dropped)
	}
	b.WriteString("# Replay: moat replay FILE; in a testscript suite (package moattest) this line runs it:\n")
	b.WriteString("replay\n")
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// WriteFile writes the archive to name, replacing it whole (a temporary
// file renamed over it), so an archive on disk is never half written.
func (r *Recorder) WriteFile(name string) error {
	b, err := r.Bytes()
	if err != nil {
		return err
	}
	return atomicfile.Write(name, b, false) // 0600: it may hold file contents; as --transcript
}
