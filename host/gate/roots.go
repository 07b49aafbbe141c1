package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/display"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
)

// Roots is the approval gate of a workspace of several roots (host/confine
// NewRoots): one Gate a root, each with its own os.Root, its root's
// configs (policy.ConfigNamed) and git folders, and the one policy judged
// relative to it; moat's own protected paths (policy.Protect) hold for
// every root. A proposal names its file label/path; the root of that
// label judges and writes it, and every message names the file the same
// way. Proposals are reviewed one at a time, whichever root they are for.
type Roots struct {
	mu     sync.Mutex
	labels []string
	gates  []*Gate
}

// NewRoots opens a gate for each of dirs, with opt (whose Root is
// unused).
func NewRoots(dirs []confine.Dir, opt Options) (*Roots, error) {
	r := &Roots{}
	for _, d := range dirs {
		o := opt
		o.Root = d.Path
		g, err := New(o)
		if err != nil {
			r.Close()
			return nil, err
		}
		g.label = d.Label
		r.labels = append(r.labels, d.Label)
		r.gates = append(r.gates, g)
	}
	return r, nil
}

// Close releases every root's gate.
func (r *Roots) Close() error {
	var errs []error
	for _, g := range r.gates {
		errs = append(errs, g.Close())
	}
	return errors.Join(errs...)
}

// Propose hands the proposal to the gate of the root its path is in,
// with the path made relative to that root.
func (r *Roots) Propose(ctx context.Context, tool string, args json.RawMessage) toolspec.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // re-encoded numbers stay exactly as sent
	if err := dec.Decode(&m); err != nil {
		return toolspec.Errorf("%s arguments: %v", tool, err)
	}
	given, _ := m["path"].(string)
	rel, err := policy.Clean(given)
	if err != nil {
		return refusedText("refused: %s; nothing was written. Name a file by its root's name and its path in it.", display.Line(err.Error()))
	}
	label, rest, _ := strings.Cut(rel, "/")
	for i, l := range r.labels {
		if l != label {
			continue
		}
		if rest == "" {
			return refusedText("refused: %s is the root %s, not a file; nothing was written. Name a file inside it.", display.Line(given), display.Line(l))
		}
		m["path"] = rest
		b, err := json.Marshal(m)
		if err != nil {
			return toolspec.Errorf("%s arguments: %v", tool, err)
		}
		g := r.gates[i]
		p, res, out := g.propose(ctx, tool, b)
		g.record(tool, p, out)
		return res
	}
	return refusedText("refused: %s is in no root of the workspace; nothing was written. Name a file by its root's name and its path in it (the roots: %s).", display.Line(given), display.Line(strings.Join(r.labels, ", ")))
}

// refusedText is a refusal as the gate words its own.
func refusedText(format string, args ...any) toolspec.Result {
	return toolspec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}
