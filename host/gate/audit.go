package gate

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Record is one line of the audit log (JSON Lines): a proposal and what
// became of it.
type Record struct {
	Time         time.Time `json:"time"`
	Tool         string    `json:"tool"`
	Path         string    `json:"path"`               // as the model gave it
	Resolved     string    `json:"resolved,omitempty"` // root-relative, when it passed the lexical check
	Decision     string    `json:"decision"`           // written | rejected | refused | error
	Reason       string    `json:"reason,omitempty"`
	SHA256Before string    `json:"sha256_before"` // "" when the file did not exist
	SHA256After  string    `json:"sha256_after"`  // "" when nothing was written
	Bytes        int       `json:"bytes"`         // size of the proposed content
}

// auditLog appends records to a file opened O_APPEND, so earlier lines are
// never rewritten, even by a second moat sharing the file.
type auditLog struct {
	f    *os.File
	info fs.FileInfo // to refuse proposals that target the log itself
}

func openAudit(name string) (*auditLog, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("gate: audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("gate: audit log: %w", err)
	}
	return &auditLog{f: f, info: fi}, nil
}

func (a *auditLog) is(fi fs.FileInfo) bool { return os.SameFile(a.info, fi) }

func (a *auditLog) Close() error { return a.f.Close() }

func (a *auditLog) write(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = a.f.Write(append(b, '\n')) // one write per record: lines do not interleave
	return err
}

// record appends the outcome of a proposal to the audit log, if there is
// one. A failed write is reported on Notes; the outcome stands.
func (g *Gate) record(tool string, p *proposal, out outcome) {
	if g.audit == nil {
		return
	}
	r := Record{
		Time: g.opt.Now().UTC(), Tool: tool, Path: g.named(p.given), Resolved: g.named(p.rel),
		Decision: out.decision, Reason: out.reason,
		SHA256Before: out.before, SHA256After: out.after, Bytes: len(p.content),
	}
	if err := g.audit.write(r); err != nil {
		fmt.Fprintf(g.opt.Notes, "moat: audit log: %v\n", err)
	}
}
