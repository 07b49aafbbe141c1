package assembly

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/display"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/mcpserver"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
)

// Approver is who answers a session's write proposals.
type Approver int

const (
	// ModelAtTerminal: a model proposes, a person approves at the
	// terminal (moat ask, chat). With no terminal to ask on, the model is
	// offered no writes at all, as with --writes deny: every proposal
	// would be refused, and it is better the model not try.
	ModelAtTerminal Approver = iota
	// TypedAtTerminal: the person typed the call (moat tool), and
	// approves it at the terminal; the review names them, not a model.
	// With no terminal the gate refuses the proposal, saying why.
	TypedAtTerminal
	// Client: the MCP client's elicitation dialog (moat mcp), through
	// mcpserver's Approver; Writes.Reviewer, when set, answers in the
	// dialog's place (a replay of moat mcp).
	Client
	// Recorded: Writes.Reviewer answers each proposal (moat replay: the
	// decisions in the recording).
	Recorded
)

// Writes say whether write proposals are offered and who approves them.
type Writes struct {
	Offer bool     // --writes ask (false: deny)
	By    Approver // who approves
	// Audit is the JSONL file every proposal and its outcome is appended
	// to ("" for none); AuditFrom names where it came from in messages
	// (--audit, or MOAT_AUDIT; "" is --audit).
	Audit, AuditFrom string
	// ApproveTimeout bounds a Client's answer (0: mcpserver's default).
	ApproveTimeout time.Duration
	// Reviewer answers for Recorded, and for Client in a replay.
	Reviewer gate.Reviewer
}

// Word is the --writes value they stand for: ask or deny.
func (w Writes) Word() string {
	if w.Offer {
		return "ask"
	}
	return "deny"
}

// CheckAudit opens the audit file as the gate will (creating it), so that
// a path that cannot be one is refused as the flag's mistake (a Failure),
// before anything else, whether or not writes are offered.
func (w Writes) CheckAudit() error {
	if w.Audit == "" {
		return nil
	}
	from := or(w.AuditFrom, "--audit")
	if isDir(w.Audit) {
		return FileError(from, w.Audit, syscall.EISDIR)
	}
	f, err := os.OpenFile(w.Audit, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return FileError(from, w.Audit, err)
	}
	return f.Close()
}

// AuditUnused says, on notes, why the audit file records nothing in this
// run; nothing without an audit file.
func (w Writes) AuditUnused(notes io.Writer, why string) {
	if w.Audit == "" {
		return
	}
	from, name := or(w.AuditFrom, "--audit"), agent.Sanitize(w.Audit, false)
	if strings.HasPrefix(from, "MOAT_") {
		fmt.Fprintf(notes, "moat: %s=%q: nothing to audit in this run: %s\n", from, name, why)
		return
	}
	fmt.Fprintf(notes, "moat: %s %s: nothing to audit in this run: %s\n", from, name, why)
}

// decideWrites turns writes off for a model with no terminal to approve
// them on, and says so when an audit file is given for nothing. It
// returns the --writes in effect.
func (o *Options) decideWrites() string {
	w := &o.Writes
	if w.By != ModelAtTerminal {
		return w.Word()
	}
	hasTerminal := o.HasTerminal
	if hasTerminal == nil {
		hasTerminal = gate.HasTerminal
	}
	switch {
	case w.Offer && !hasTerminal():
		// Said in help, not on every run of a script, unless a flag the
		// user gave has no effect because of it.
		w.Offer = false
		w.AuditUnused(o.notes(), "no terminal to approve writes on, so the model is offered none (as with --writes deny)")
	case !w.Offer:
		w.AuditUnused(o.notes(), "--writes deny offers the model no writes")
	}
	return w.Word()
}

// proposer builds the session's gate, with its approver, or nil when
// writes are not offered. A proposer that is also an io.Closer is closed
// with the engine.
func (o *Options) proposer(dirs []confine.Dir, pol *policy.Policy, red *redact.Redactor, rec *Recorder) (engine.Proposer, error) {
	w := &o.Writes
	if !w.Offer {
		return nil, nil
	}
	if err := (Writes{Audit: w.Audit}).CheckAudit(); err != nil {
		return nil, err
	}
	base := gate.Options{Root: dirs[0].Path, Policy: pol, AuditPath: w.Audit, Notes: o.notes(), Redactor: red}
	switch w.By {
	case Client:
		a, err := mcpserver.NewApprover(w.ApproveTimeout, func(r gate.Reviewer) (engine.Proposer, error) {
			switch {
			case w.Reviewer != nil:
				r = w.Reviewer // a replay answers in the dialog's place
			case rec != nil:
				r = rec.Reviewer(r)
			}
			opt := base
			opt.Reviewer = r
			return newGate(dirs, opt)
		})
		if err != nil {
			return nil, err
		}
		return a, nil
	case Recorded:
		base.Reviewer = w.Reviewer
		return newGate(dirs, base)
	}
	// At the terminal: /dev/tty whatever stdin and stdout are.
	base.Color = display.Color(o.getenv)
	base.KeepTypedAhead = keepTypedAhead(o.getenv)
	base.Typed = w.By == TypedAtTerminal
	if rec != nil {
		base.Reviewer = rec.Reviewer(&gate.Terminal{Color: base.Color, KeepTypedAhead: base.KeepTypedAhead})
	}
	return newGate(dirs, base)
}

// newGate is gate.New (gate.NewRoots, with several roots) as an
// engine.Proposer (never a typed nil).
func newGate(dirs []confine.Dir, opt gate.Options) (engine.Proposer, error) {
	if len(dirs) > 1 {
		g, err := gate.NewRoots(dirs, opt)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	g, err := gate.New(opt)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// keepTypedAhead is whether the gate leaves keys typed before a question
// to answer it: only under moat's own testscripts, whose ttyin types all
// of a script's answers before moat starts (MOAT_TEST_TYPEAHEAD=keep, set
// by the suite's setup). Everywhere else each question first discards
// them, so that only a person who has seen it answers.
func keepTypedAhead(getenv func(string) string) bool {
	return getenv("MOAT_TEST_TYPEAHEAD") == "keep"
}

// FileError words a file named by a flag that could not be opened, in one
// line that says what to change: `--audit /x/a.jsonl: no such folder: /x`.
// It is a Failure, not a Usage error: the command line is right, the file
// system is not as it says. from is where the name came from: "--audit",
// or "MOAT_AUDIT" (then the line reads MOAT_AUDIT="/x/a.jsonl"), or ""
// for an argument.
func FileError(from, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	why := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file"
		if dir := filepath.Dir(path); !isDir(dir) {
			why = "no such folder: " + dir
		}
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	case errors.Is(err, syscall.EISDIR) || isDir(path):
		why = "is a folder, not a file"
	case errors.Is(err, syscall.ENOTDIR):
		why = "a part of the path is a file, not a folder"
	}
	switch {
	case from == "": // an argument, not a flag's value
		return failf("%s: %s", path, why)
	case strings.HasPrefix(from, "MOAT_"):
		return failf("%s=%q: %s", from, path, why)
	}
	return failf("%s %s: %s", from, path, why)
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
