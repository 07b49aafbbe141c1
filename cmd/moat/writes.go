package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
)

// writeFlags configure the approval gate for commands that can offer the
// model propose_write and propose_edit.
type writeFlags struct {
	writes string // ask | deny
	audit  string // JSONL audit file, "" for none
	// wrap, if set, wraps the terminal reviewer (--record keeps each
	// decision).
	wrap func(gate.Reviewer) gate.Reviewer
	// typed: the proposals are the person's own (moat tool), and the
	// review says so rather than naming a model.
	typed bool
}

// Who approves a write under --writes ask, as each command's help says it.
const (
	askAtTerminal = "a person approves each one at the terminal"
	askInClient   = "offered to clients that support elicitation; the user approves each diff in the client"
)

// register declares --writes and --audit; ask says who approves a write.
func (w *writeFlags) register(fs *flag.FlagSet, ask string) {
	fs.StringVar(&w.writes, "writes", "ask", "write proposals: ask ("+ask+") or deny (not offered to the model)")
	fs.StringVar(&w.audit, "audit", "", "append every write proposal and its outcome to this JSONL `file`")
	validate(fs, "writes", oneOf(&w.writes, "ask", "deny")) // the one check of --writes
}

// offered reports whether the model is offered write proposals at all.
func (w *writeFlags) offered() bool { return w.writes == "ask" }

// proposer builds the approval gate for a session, or nil when writes are
// not offered (--writes deny). A proposer that is also an io.Closer is
// closed with the engine. The prompt goes to /dev/tty whatever stdin and
// stdout are; without a terminal every proposal is refused. The
// value was checked when set.
func (w *writeFlags) proposer(absRoot string, pol *policy.Policy, red *redact.Redactor, notes io.Writer) (engine.Proposer, error) {
	if !w.offered() {
		return nil, nil
	}
	if err := w.checkAudit(); err != nil {
		return nil, err
	}
	var rv gate.Reviewer // nil: the gate's terminal
	keep := keepTypedAhead(os.Getenv)
	if w.wrap != nil {
		rv = w.wrap(&gate.Terminal{Color: colorTerminal(os.Getenv), KeepTypedAhead: keep})
	}
	g, err := gate.New(gate.Options{
		Root:           absRoot,
		Policy:         pol,
		Reviewer:       rv,
		Color:          colorTerminal(os.Getenv),
		KeepTypedAhead: keep,
		AuditPath:      w.audit,
		Notes:          notes,
		Redactor:       red,
		Typed:          w.typed,
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// checkAudit opens the --audit file as the gate will (creating it), so
// that a path that cannot be one is refused as the flag's mistake, before
// the gate is built.
func (w *writeFlags) checkAudit() error { return w.checkAuditFrom("--audit") }

// checkAuditFrom is checkAudit naming where the path came from (--audit,
// or MOAT_AUDIT).
func (w *writeFlags) checkAuditFrom(from string) error {
	if w.audit == "" {
		return nil
	}
	if isDir(w.audit) {
		return fileError(from, w.audit, syscall.EISDIR)
	}
	f, err := os.OpenFile(w.audit, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fileError(from, w.audit, err)
	}
	return f.Close()
}

// auditUnused says, once, why --audit records nothing in this run: the
// model is offered no writes (why: --writes deny, or no terminal).
func (w *writeFlags) auditUnused(stderr io.Writer, from, why string) {
	if w.audit == "" {
		return
	}
	name := agent.Sanitize(w.audit, false)
	if strings.HasPrefix(from, "MOAT_") {
		fmt.Fprintf(stderr, "moat: %s=%q: nothing to audit in this run: %s\n", from, name, why)
		return
	}
	fmt.Fprintf(stderr, "moat: %s %s: nothing to audit in this run: %s\n", from, name, why)
}

// colorTerminal follows the usual conventions: no colour for a dumb or
// unknown terminal, or when NO_COLOR is set to anything (no-color.org).
func colorTerminal(getenv func(string) string) bool {
	t := getenv("TERM")
	return t != "" && t != "dumb" && getenv("NO_COLOR") == ""
}

// keepTypedAhead is whether the gate leaves keys typed before a question
// to answer it: only under moat's own testscripts, whose ttyin types all
// of a script's answers before moat starts (MOAT_TEST_TYPEAHEAD=keep, set
// by the suite's setup). Everywhere else each question first discards
// them, so that only a person who has seen it answers.
func keepTypedAhead(getenv func(string) string) bool {
	return getenv("MOAT_TEST_TYPEAHEAD") == "keep"
}
