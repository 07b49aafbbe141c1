// Package gate is the approval gate: the only code in moat that changes the
// disk. A propose_write or propose_edit call from the model is checked,
// rendered as a [Review] (the facts of the change, a header and a unified
// diff), shown to a person by a [Reviewer], and applied only after they
// explicitly approve it. The [Terminal] asks at /dev/tty; moat mcp's
// elicitation dialog is the other Reviewer. What the model is told depends
// on how the review ended ([Outcome]): only a person's no reads "the user
// declined".
//
// # What the gate guarantees
//
//   - Nothing is written without an explicit approval: at the terminal, "y"
//     or "yes" read from the controlling terminal (/dev/tty), never from
//     stdin, so a pipe can neither answer the prompt nor hide it, and only
//     after the whole diff was shown. No terminal: refused.
//   - Everything shown passes through [display.Sanitize]: escape sequences,
//     CR, bidi and zero-width characters in paths, content and diffs are
//     shown escaped, never interpreted.
//   - The write happens in this process through an [os.Root] opened on the
//     sandbox root: the path must be lexically inside the root, no parent
//     may be a symlink (even one that stays inside), the target may not be
//     a symlink (dangling or not), a hard-linked file or anything but a
//     regular file, and the deny-list for writes applies. New content goes
//     to a temporary file in the same folder, is fsynced and renamed over
//     the target, keeping the replaced file's permission bits.
//   - If the file changed between the diff being shown and the answer, the
//     write is refused and the model is asked to propose again.
//
// # Limits
//
// The checks and the rename are separate system calls. A process that
// races the gate by swapping a parent folder for a symlink between the last
// check and the rename can redirect the write only to another place inside
// the root: os.Root does not let a path leave it. Keys typed ahead of a
// question are discarded before it is asked (tcflush TCIFLUSH, Linux and
// the BSDs), so they cannot answer it.
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/display"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/toolspec"
)

// MaxFileBytes is the largest file the gate will show and replace, and the
// largest content it will write: a change a person can review at a terminal.
const MaxFileBytes = 8 << 20

// Errors of the gate. Refusals wrap one of them; the text shown to the model
// is built from the refusal's own message.
var (
	ErrNoTerminal = errors.New("gate: no terminal to ask for approval")
	ErrSymlink    = errors.New("gate: symbolic link")
	ErrHardLink   = errors.New("gate: file has more than one hard link")
	ErrNotRegular = errors.New("gate: not a regular file or folder")
	ErrDenied     = errors.New("gate: path is on the write deny-list")
	ErrBadName    = errors.New("gate: path has control or invisible characters")
	ErrTooLarge   = errors.New("gate: too large to review")
	ErrChanged    = errors.New("gate: file changed during review")
)

// TTY is the terminal the prompt is written to and the answer read from.
type TTY = io.ReadWriteCloser

// Options configure a Gate.
type Options struct {
	// Root is the absolute path of the sandbox root.
	Root string
	// Policy decides which paths may never be written.
	Policy *policy.Policy
	// Reviewer shows each change to a person and returns their answer;
	// nil is a [Terminal] built from OpenTTY and Color.
	Reviewer Reviewer
	// OpenTTY opens the terminal for one prompt; nil opens /dev/tty.
	// An error means there is no one to ask: the proposal is refused.
	// Used only when Reviewer is nil.
	OpenTTY func() (TTY, error)
	// Color turns on coloured diffs (the caller checks TERM and NO_COLOR).
	Color bool
	// KeepTypedAhead is the default Terminal's KeepTypedAhead: for moat's
	// own test suite only.
	KeepTypedAhead bool
	// AuditPath, if set, is a JSONL file every proposal and its outcome is
	// appended to.
	AuditPath string
	// Notes receives problems that are not the model's business, such as a
	// failed audit write; nil discards them.
	Notes io.Writer
	// Now is the clock for audit records; nil is time.Now.
	Now func() time.Time
	// Redactor, when set, hides the current file's secrets (well-known
	// shapes: keys, tokens) in the diff a person is shown; see
	// [secretsOf].
	Redactor *redact.Redactor
	// Typed says the proposals are a person's own (moat tool, typed at
	// the command line), not a model's: the review's title and path line
	// say so instead of naming the model.
	Typed bool
}

// Gate implements engine.Proposer. It is safe for concurrent use: prompts
// are shown one at a time.
type Gate struct {
	opt      Options
	root     *os.Root
	rootReal string // Root with its symbolic links resolved
	audit    *auditLog
	// label, with several roots (Roots), is this root's: the model names
	// its files label/path, and is told of them so.
	label string

	mu sync.Mutex // one proposal at a time: one prompt on the terminal

	// beforeOpen, when set (by tests only), runs between the check of a
	// target and its open, where a local writer may swap it.
	beforeOpen func(rel string)
}

// New opens the sandbox root (and the audit file) for writing.
func New(opt Options) (*Gate, error) {
	if opt.Root == "" || opt.Policy == nil {
		return nil, errors.New("gate: Root and Policy are required")
	}
	if opt.Reviewer == nil {
		opt.Reviewer = &Terminal{Open: opt.OpenTTY, Color: opt.Color, KeepTypedAhead: opt.KeepTypedAhead}
	}
	if opt.Notes == nil {
		opt.Notes = io.Discard
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	root, err := os.OpenRoot(opt.Root)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	g := &Gate{opt: opt, root: root, rootReal: opt.Root}
	if r, err := filepath.EvalSymlinks(opt.Root); err == nil {
		g.rootReal = r
	}
	if opt.AuditPath != "" {
		if g.audit, err = openAudit(opt.AuditPath); err != nil {
			root.Close()
			return nil, err
		}
	}
	return g, nil
}

// Close releases the root and the audit file.
func (g *Gate) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	err := g.root.Close()
	if g.audit != nil {
		err = errors.Join(err, g.audit.Close())
	}
	return err
}

// proposal is one change as the gate understands it.
type proposal struct {
	tool    string
	given   string // the path as the model wrote it
	shown   string // given, made safe to print and to quote to the model
	rel     string // cleaned, root-relative, slash-separated
	content []byte // the complete new content
	edit    bool   // an edit (propose_edit), not a whole new content
	edits   int    // an edit: replacements made
	// oversize is the size the content would have had, when that is
	// past MaxFileBytes and the content was therefore never built.
	oversize int
	// named is the root's config that names this file as a build
	// script, when one does (a warning, not a refusal).
	named *policy.Named
}

// outcome is the decision the audit log records.
type outcome struct {
	decision string // written | rejected | refused | error
	reason   string
	before   string // sha256 of the file before, "" if it did not exist
	after    string // sha256 written, "" if nothing was written
}

// Propose handles one propose_write or propose_edit call. The arguments
// were validated against the tool's schema and checked lexically by the
// caller; the gate checks them again, because it is the last line.
func (g *Gate) Propose(ctx context.Context, tool string, args json.RawMessage) toolspec.Result {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, res, out := g.propose(ctx, tool, args)
	g.record(tool, p, out)
	return res
}

func (g *Gate) propose(ctx context.Context, tool string, args json.RawMessage) (*proposal, toolspec.Result, outcome) {
	p := &proposal{tool: tool}
	notWrite := func() (*proposal, toolspec.Result, outcome) {
		return p, toolspec.Errorf("%s is not a write proposal", tool), outcome{decision: "error", reason: "unknown tool"}
	}
	// The registry's row says whether the tool proposes a write, and its
	// argument struct which kind of write.
	d, ok := proto.Lookup(tool)
	if !ok || !d.Is(proto.Writes) {
		return notWrite()
	}
	decoded := d.NewArgs()
	if err := json.Unmarshal(args, decoded); err != nil {
		return p, toolspec.Errorf("%s arguments: %v", tool, err), outcome{decision: "error", reason: err.Error()}
	}
	var edit *proto.ProposeEditArgs
	switch a := decoded.(type) {
	case *proto.ProposeWriteArgs:
		p.given, p.content = a.Path, []byte(a.Content)
	case *proto.ProposeEditArgs:
		if msg := editForm(args); msg != "" {
			return p, toolspec.Errorf("%s", msg), outcome{decision: "error", reason: msg}
		}
		p.given, p.edit, edit = a.Path, true, a
	default:
		return notWrite()
	}
	p.shown = display.Line(g.named(p.given))

	rel, err := g.checkPath(p.given)
	if err != nil {
		return p, refused(p, err), outcome{decision: "refused", reason: err.Error()}
	}
	p.rel = rel
	if n, ok := policy.UnderNamed(rel, g.configNamed()); ok {
		if n.Never {
			err := refusal(ErrDenied, "Ask the user to make this change themselves.", "is inside %s, which %s names as code to run without anyone deciding to (never written)", display.Line(n.Rel), display.Line(n.By))
			return p, refused(p, err), outcome{decision: "refused", reason: err.Error()}
		}
		p.named = &n
	}
	snap, err := g.inspect(rel)
	if err != nil {
		return p, refused(p, err), outcome{decision: "refused", reason: err.Error()}
	}
	out := outcome{before: snap.sum()}

	if p.edit {
		if msg := applyEdit(p, snap, *edit); msg != "" {
			if strings.Contains(edit.OldText, redactMark) {
				msg += ". " + redactHint
			}
			out.decision, out.reason = "error", msg
			return p, toolspec.Result{Text: "error: " + msg, IsError: true}, out
		}
	}
	if size := max(len(p.content), p.oversize); size > MaxFileBytes {
		err := refusal(ErrTooLarge, "Split the change into smaller edits.", "is too large: the new content is %d bytes, more than the %d a person can review at the terminal", size, MaxFileBytes)
		out.decision, out.reason = "refused", err.Error()
		return p, refused(p, err), out
	}
	err = gitHead(p.rel, p.content)
	if err == nil {
		err = gitConfig(p.content)
	}
	if err == nil {
		err = g.writesMarks(p, snap)
	}
	if err != nil {
		out.decision, out.reason = "refused", err.Error()
		return p, refused(p, err), out
	}
	if snap.exists && string(snap.data) == string(p.content) {
		msg := fmt.Sprintf("%s already has exactly this content (%d bytes); nothing to write", p.shown, len(p.content))
		out.decision, out.reason = "error", "unchanged"
		return p, toolspec.Result{Text: "error: " + msg, IsError: true}, out
	}

	r := g.review(screen{color: g.opt.Color}, p, snap)
	v := g.opt.Reviewer.Review(ctx, r)
	if v.Outcome != Approved {
		text, o := v.result(p.shown)
		out.decision, out.reason = o.decision, o.reason
		return p, toolspec.Result{IsError: true, Text: text}, out
	}
	rep, _ := g.opt.Reviewer.(Reporter)
	sum, err := g.apply(p, snap)
	if err != nil {
		out.decision, out.reason = "refused", err.Error()
		if rep != nil {
			rep.Report(r, fmt.Sprintf("moat: not written: %s %s", p.shown, display.Line(err.Error())))
		}
		return p, refused(p, err), out
	}
	out.decision, out.after = "written", sum
	if rep != nil {
		rep.Report(r, fmt.Sprintf("moat: wrote %s (%d bytes)", r.File, len(p.content)))
	}
	return p, toolspec.Result{Text: fmt.Sprintf("wrote %s (%d bytes)", p.shown, len(p.content)), Written: true}, out
}

// named is a path of this root as the model names it: with several
// roots, under the root's label.
func (g *Gate) named(given string) string {
	if g.label == "" || given == "" {
		return given
	}
	return path.Join(g.label, given)
}

// checkPath applies the lexical and name rules to a path as the model gave
// it and returns it cleaned.
func (g *Gate) checkPath(given string) (string, error) {
	rel, err := policy.Clean(given)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", refusal(ErrNotRegular, "Name a file inside it.", "is the workspace root, not a file")
	}
	if display.Count(rel) > 0 || strings.ContainsAny(rel, "\n\t") {
		return "", refusal(ErrBadName, "Choose a plain name.", "contains control or invisible characters (such names hide from people listing the folder)")
	}
	if rule, denied := g.opt.Policy.WriteDenied(rel); denied {
		return "", refusal(ErrDenied, "Ask the user to make this change themselves.", "matches the write deny rule %q (secrets, repository internals and files that configure tools are never written)", rule)
	}
	for _, base := range []string{g.opt.Root, g.rootReal} {
		abs := filepath.Join(base, filepath.FromSlash(rel))
		if d, ok := g.opt.Policy.Protected(abs); ok {
			return "", refusal(ErrDenied, "Ask the user to make this change themselves.", "is moat's own configuration, state or cache (under %s): moat never writes what configures moat", display.Line(d))
		}
	}
	return rel, nil
}

// refusedError is a refusal: a sentinel for errors.Is, the reason, and
// what the model should do next.
type refusedError struct {
	kind   error
	msg    string // follows the path: "is a symbolic link (...)"
	advice string // a sentence for the model, or ""
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return e.kind }

func refusal(kind error, advice, format string, args ...any) error {
	return &refusedError{kind: kind, msg: fmt.Sprintf(format, args...), advice: advice}
}

// refused builds the model's result for a refusal: "refused: P reason;
// nothing was written. Advice." Lexical errors from policy name the path
// themselves.
func refused(p *proposal, err error) toolspec.Result {
	var (
		pe   *policy.PathError
		re   *refusedError
		text string
	)
	switch {
	case errors.As(err, &pe):
		text = fmt.Sprintf("refused: %s; nothing was written. Use a path relative to the workspace root, inside it.", display.Line(err.Error()))
	case errors.As(err, &re):
		text = fmt.Sprintf("refused: %s %s; nothing was written.", p.shown, display.Line(re.msg))
		if re.advice != "" {
			text += " " + re.advice
		}
	default:
		text = fmt.Sprintf("refused: %s %s; nothing was written.", p.shown, display.Line(err.Error()))
	}
	return toolspec.Result{IsError: true, Text: text}
}

// sha256hex returns the hex SHA-256 of b.
func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return fmt.Sprintf("%x", s[:])
}

// redactMark begins what stands in for a secret in what the tools return
// (redact.Mark); redactHint tells the model what to do when it finds one
// in its own proposal.
const (
	redactMark = "[redacted: "
	redactHint = "A [redacted: RULE] mark stands for a secret moat hid from you when the file was read; the file holds the secret, not the mark. Change only the text around it (old_text must not include the mark), or ask the user to change the secret"
)

// writesMarks refuses new content that holds more redaction marks than
// the file does now: the model is writing back what it read, and the
// secrets the marks stand for would be lost, in a diff whose old side
// shows the same marks.
func (g *Gate) writesMarks(p *proposal, snap *snapshot) error {
	if g.opt.Redactor == nil {
		return nil
	}
	n := strings.Count(string(p.content), redactMark)
	if n == 0 || n <= strings.Count(string(snap.data), redactMark) {
		return nil
	}
	return refusal(ErrDenied, redactHint+".", "would hold %d %sRULE] mark%s where the file has secrets moat hid from you; writing it would replace them", n, redactMark, plural(n))
}
