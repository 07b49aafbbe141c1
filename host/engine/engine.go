// Package engine is the one path every tool call takes, whichever way it
// arrives (moat tool, the agent loop, MCP): validate the arguments against
// the shared schema, check paths lexically, then send read-only calls to the
// sandboxed guest and write proposals to the approval gate.
package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/toolspec"
)

// Executor runs validated read-only calls in the guest: in this process
// (host/runner) or in the isolated child process (isolate).
type Executor interface {
	Exec(ctx context.Context, req proto.Request) (proto.Response, error)
	Close() error
}

// Proposer receives propose_write and propose_edit calls: the approval gate.
// It is the only way a call can change the disk. A Proposer that is also an
// io.Closer is closed with the engine.
type Proposer interface {
	Propose(ctx context.Context, tool string, args json.RawMessage) toolspec.Result
}

// Options configure an Engine.
type Options struct {
	Catalog  *toolspec.Catalog
	Policy   *policy.Policy
	Limits   proto.Limits
	Exec     Executor
	Proposer Proposer // nil: writes are not offered
	// Root is the workspace root's absolute path. When set, absolute paths
	// inside it are accepted and mapped to relative ones (policy.Within).
	Root string
	// Roots, when there are several, are the workspace's folders with
	// their labels (host/confine NewRoots; Root is then unused): a path
	// is label/path, judged by the deny-list relative to its root; an
	// absolute path inside a root is mapped to label/path; a path that
	// leaves its root by ".." into another is refused as an escape.
	Roots []confine.Dir
	// Redactor, when set, replaces well-known secret shapes in every
	// line of an answer of a read-only tool with "[redacted: RULE-ID]"
	// before anyone (the model, an MCP client, moat tool's stdout) sees
	// it. It is the second line: the files' content reaches the guest as
	// their redacted view (runner.Config.NoRedact off), and this hides
	// what the view cannot, a secret in a file's name. --allow does not
	// turn either off (--redact=false does both).
	Redactor *redact.Redactor
}

// Engine dispatches tool calls. It is safe for concurrent use; calls to the
// executor run as the executor allows (host/runner runs several at once,
// each in an instance of its own).
type Engine struct {
	opt   Options
	roots []string // Root and its symlink-resolved form, for policy.Within
	// several: with several roots, each root's label and its two forms.
	several []labelled
	next    atomic.Uint64
	mu      sync.Mutex // guards done
	done    bool
}

// New builds an engine from its parts.
func New(opt Options) (*Engine, error) {
	if opt.Catalog == nil || opt.Policy == nil || opt.Exec == nil {
		return nil, errors.New("engine: Catalog, Policy and Exec are required")
	}
	e := &Engine{opt: opt}
	if len(opt.Roots) > 1 {
		for _, d := range opt.Roots {
			e.several = append(e.several, labelled{label: d.Label, forms: forms(d.Path)})
		}
		return e, nil
	}
	if opt.Root != "" {
		e.roots = forms(opt.Root)
	}
	return e, nil
}

// labelled is one of several roots: its label and its absolute forms.
type labelled struct {
	label string
	forms []string
}

// forms is root, clean, and its symlink-resolved form when that differs.
func forms(root string) []string {
	r := filepath.Clean(root)
	out := []string{r}
	if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
		out = append(out, real)
	}
	return out
}

// Tools lists the tools offered to the model: the write proposals only when
// a Proposer can get them approved.
//
// With several roots each tool's description ends with how a file is
// named then (toolspec.Tool.Roots); with one it is the catalogue's as it
// is, so a model's window holds what it always held.
func (e *Engine) Tools() []*toolspec.Tool {
	tools := e.opt.Catalog.Tools(e.opt.Proposer != nil)
	if e.several == nil {
		return tools
	}
	out := make([]*toolspec.Tool, len(tools))
	for i, t := range tools {
		c := *t
		if c.Roots != "" {
			c.Description += " " + c.Roots
		}
		out[i] = &c
	}
	return out
}

// Catalog returns the tool catalogue.
func (e *Engine) Catalog() *toolspec.Catalog { return e.opt.Catalog }

// Call runs one tool call. Every failure, from malformed JSON to a guest out
// of memory, comes back as an error Result the model can read; Call never
// panics on model input.
func (e *Engine) Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	args, given, err := e.withinRoot(name, args)
	if err != nil {
		return toolspec.Errorf("%v", err)
	}
	res := e.call(ctx, name, args)
	if res.IsError {
		// Errors name the path as the model gave it, not as it was mapped.
		for rel, abs := range given {
			res.Text = renamePath(res.Text, rel, abs)
		}
	}
	return res
}

// renamePath replaces rel where an error message names it (after ": ",
// up to the end, a space or a newline) with given. Quoted text (a deny
// rule, say) is left alone.
func renamePath(text, rel, given string) string {
	if rel == "." || rel == "" {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, ": "+rel)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + 2 + len(rel)
		if end == len(text) || text[end] == ' ' || text[end] == '\n' {
			b.WriteString(text[:i+2])
			b.WriteString(given)
		} else {
			b.WriteString(text[:end])
		}
		text = text[end:]
	}
}

func (e *Engine) call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	t, canon, err := e.opt.Catalog.Validate(name, args)
	if err != nil {
		return toolspec.Errorf("%v", err)
	}
	if r, ok := e.leavesRoot(t, canon); ok {
		return r
	}
	if t.Write {
		if e.opt.Proposer == nil {
			return toolspec.Errorf("%s is not available: writes are disabled in this session (--writes deny, or no terminal to approve them)", name)
		}
		return e.opt.Proposer.Propose(ctx, name, canon)
	}
	if r, ok := e.denied(t, canon); ok {
		return r
	}
	resp, err := e.opt.Exec.Exec(ctx, proto.Request{ID: e.next.Add(1), Tool: name, Args: canon, Limits: e.opt.Limits})
	if err != nil {
		return toolspec.Errorf("%s failed: %v", name, err)
	}
	text := resp.Text
	if e.opt.Redactor != nil {
		// The second line: the guest read the files' redacted view
		// (host/confine), so this is for what the view cannot hide, a
		// secret in a file's name. Each line on its own, so that no rule
		// matches across two files' lines of one answer.
		text, _ = e.opt.Redactor.RedactLines(text)
	}
	return toolspec.Result{Text: text, IsError: resp.IsError}
}

// withinRoot rewrites absolute path arguments that lie inside the root to
// relative ones, before validation, so every later step (schema, deny-list,
// guest, gate) sees the one form it knows, and returns each mapped path's
// given form by its relative one. Arguments it cannot read are left for
// Validate to explain.
func (e *Engine) withinRoot(name string, args json.RawMessage) (json.RawMessage, map[string]string, error) {
	t, ok := e.opt.Catalog.Lookup(name)
	if !ok || len(e.roots) == 0 && len(e.several) == 0 || !bytes.Contains(args, []byte(`"/`)) {
		return args, nil, nil
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // re-encoded numbers stay exactly as sent
	if dec.Decode(&m) != nil || dec.More() {
		return args, nil, nil
	}
	given := map[string]string{}
	for _, f := range t.PathFields {
		v, ok := m[f].(string)
		if !ok || !strings.HasPrefix(v, "/") {
			continue
		}
		rel, err := e.within(v)
		if err != nil {
			return nil, nil, err
		}
		m[f], given[rel] = rel, v
	}
	if len(given) == 0 {
		return args, nil, nil
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args, nil, nil
	}
	return out, given, nil
}

// within maps an absolute path onto the workspace (policy.Within): with
// several roots, onto the root it is in, as label/path.
func (e *Engine) within(p string) (string, error) {
	if e.several == nil {
		return policy.Within(p, e.roots...)
	}
	var labels []string
	for _, r := range e.several {
		if rel, err := policy.Within(p, r.forms...); err == nil {
			return path.Join(r.label, rel), nil
		}
		labels = append(labels, r.label)
	}
	return "", &policy.PathError{Path: p, Err: policy.ErrAbsolute,
		Hint: fmt.Sprintf("it is outside every root of the workspace; name a file by its root's name and its path in it (the roots: %s)", strings.Join(labels, ", "))}
}

// inRoot is a clean path relative to its root, with several roots (the
// label taken off: "." for a root itself and for the top), and whether
// the path leaves the root it starts in by ".." (a/../b/x): given names
// the path as the model wrote it. With one root it is c as it is.
func (e *Engine) inRoot(given, c string) (string, bool) {
	if e.several == nil {
		return c, false
	}
	first := func(p string) string {
		for _, el := range strings.Split(p, "/") {
			if el != "" && el != "." {
				return el
			}
		}
		return ""
	}
	label, rest, _ := strings.Cut(c, "/")
	if c == "." {
		label = ""
	}
	if g := first(proto.PathName(given)); g != label {
		return "", true
	}
	if rest == "" {
		rest = "."
	}
	return rest, false
}

// leavesRoot refuses, with several roots, a path that leaves the root it
// starts in by "..", as any escape: the guest and the gate would clean
// a/../b/x to b/x, a name of the other root.
func (e *Engine) leavesRoot(t *toolspec.Tool, canon json.RawMessage) (toolspec.Result, bool) {
	var m map[string]any
	if e.several == nil || json.Unmarshal(canon, &m) != nil {
		return toolspec.Result{}, false
	}
	for _, f := range t.PathFields {
		p, _ := m[f].(string)
		if c, err := policy.Clean(p); err == nil {
			if _, leaves := e.inRoot(p, c); leaves {
				return toolspec.Errorf("%v", &policy.PathError{Path: p, Err: policy.ErrEscape}), true
			}
		}
	}
	return toolspec.Result{}, false
}

// denied refuses a path on the deny-list before the guest runs, so the model
// learns which rule matched. The confined filesystem enforces the same list
// on every resolved path; this check only makes the message clear. With
// several roots each path is judged relative to its root.
func (e *Engine) denied(t *toolspec.Tool, canon json.RawMessage) (toolspec.Result, bool) {
	var m map[string]any
	if json.Unmarshal(canon, &m) != nil {
		return toolspec.Result{}, false
	}
	for _, f := range t.PathFields {
		p, _ := m[f].(string)
		c, err := policy.Clean(p)
		if err != nil {
			return toolspec.Errorf("%v", err), true
		}
		c, _ = e.inRoot(p, c)
		if rule, ok := e.opt.Policy.Denied(c); ok {
			return toolspec.Errorf("%v", &policy.PathError{Path: p, Err: policy.ErrDenied, Rule: rule}), true
		}
	}
	return toolspec.Result{}, false
}

// Close stops the executor.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return nil
	}
	e.done = true
	if c, ok := e.opt.Proposer.(io.Closer); ok {
		c.Close()
	}
	if err := e.opt.Exec.Close(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}
