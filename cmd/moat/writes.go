package main

import (
	"flag"

	"github.com/moatdev/moat/host/assembly"
)

// writeFlags are --writes and --audit, for commands that can offer the
// model propose_write and propose_edit; host/assembly decides what they
// come to (assembly.Writes).
type writeFlags struct {
	writes string // ask | deny
	audit  string // JSONL audit file, "" for none
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

// options are the flags as the assembly's Writes, approved by by.
func (w *writeFlags) options(e *env, by assembly.Approver) assembly.Writes {
	return assembly.Writes{Offer: w.writes == "ask", By: by, Audit: w.audit, AuditFrom: e.source("audit")}
}
