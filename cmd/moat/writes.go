package main

import (
	"flag"
	"io"

	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/policy"
)

// writeFlags configure the approval gate for commands that can offer the
// model propose_write and propose_edit.
type writeFlags struct {
	writes string // ask | deny
	audit  string // JSONL audit file, "" for none
}

func (w *writeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.writes, "writes", "ask", "write proposals: ask (a person approves each one at the terminal) or deny (not offered to the model)")
	fs.StringVar(&w.audit, "audit", "", "append every write proposal and its outcome to this JSONL file")
}

// proposer builds the approval gate for a session, or nil when writes are
// not offered. A proposer that is also an io.Closer is closed with the
// engine. TODO(gate): build host/gate.
func (w *writeFlags) proposer(absRoot string, pol *policy.Policy, notes io.Writer) (engine.Proposer, error) {
	return nil, nil
}
