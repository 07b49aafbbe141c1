package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/toolspec"
)

// DefaultApproveTimeout is how long a proposal waits for the person's answer
// before it counts as refused: long enough to read a diff, short enough that
// a forgotten dialog does not hold the model's turn forever.
const DefaultApproveTimeout = 10 * time.Minute

// MaxReviewBytes caps the text sent in one elicitation. A person must see
// the whole change to approve it, and a dialog cannot page like a terminal,
// so a larger change is refused without asking (the model is told to split
// it).
const MaxReviewBytes = 256 << 10

// ErrNoCall is what the dialog opener returns outside a tools/call: there is
// no one to ask, so the gate refuses.
var ErrNoCall = errors.New("mcpserver: no MCP call to ask through")

// Dialog is what a terminal gate talks to: it writes its prompt and reads one
// answer line. host/gate's Options.OpenTTY has this shape.
type Dialog = io.ReadWriteCloser

// Approver is the engine's Proposer for MCP. It does not check, show or
// write anything itself: it runs the terminal approval gate (host/gate),
// with the same checks, the same diff, the same apply rules and the same
// audit log, but hands the gate a dialog instead of /dev/tty. The gate's
// prompt becomes the message of an elicitation request to the client, and
// the gate reads "y" only when the person explicitly accepts with
// approve=true. Decline, cancel, accept without approve, an error or a
// timeout are answered with a refusal word the gate records; nothing is
// written.
//
// A client without elicitation never reaches the gate: the proposal is
// refused before anything is prepared.
//
// Proposals are asked one at a time, and the gate prepares each after the
// previous one was applied or refused, so every diff is against what is on
// disk.
type Approver struct {
	gate    engine.Proposer
	timeout time.Duration
	turn    chan struct{} // held for the whole of one proposal

	mu  sync.Mutex
	cur *asking // the proposal being asked about; nil between proposals
}

// asking is what the dialog needs from the tools/call it serves: the
// session to elicit through and the call's context (cancelled when the
// client cancels the call or the server stops).
type asking struct {
	ctx context.Context
	ss  asker
}

// NewApprover builds an Approver. newGate builds the approval gate given the
// function it must use to open its terminal (for host/gate: Options.OpenTTY).
// timeout <= 0 means [DefaultApproveTimeout].
func NewApprover(timeout time.Duration, newGate func(open func() (Dialog, error)) (engine.Proposer, error)) (*Approver, error) {
	if timeout <= 0 {
		timeout = DefaultApproveTimeout
	}
	a := &Approver{timeout: timeout, turn: make(chan struct{}, 1)}
	g, err := newGate(a.open)
	if err != nil {
		return nil, err
	}
	a.gate = g
	return a, nil
}

// Close closes the gate (its root and audit log).
func (a *Approver) Close() error {
	if c, ok := a.gate.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Propose implements engine.Proposer. ctx must carry the MCP session the
// call came from (the Server's handlers put it there).
func (a *Approver) Propose(ctx context.Context, tool string, args json.RawMessage) toolspec.Result {
	ss := sessionFrom(ctx)
	if ss == nil || !canElicit(ss) {
		return toolspec.Errorf("%s is not available: this MCP client cannot ask the user to approve writes (it does not support elicitation), so nothing can be written", tool)
	}
	select {
	case a.turn <- struct{}{}:
		defer func() { <-a.turn }()
	case <-ctx.Done():
		return toolspec.Errorf("%s was cancelled before the user was asked; nothing was written", tool)
	}
	a.mu.Lock()
	a.cur = &asking{ctx: ctx, ss: ss}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.cur = nil
		a.mu.Unlock()
	}()
	return a.gate.Propose(ctx, tool, args)
}

// open gives the gate a dialog bound to the proposal in progress.
func (a *Approver) open() (Dialog, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil {
		return nil, ErrNoCall
	}
	return &dialog{a: a, call: a.cur}, nil
}

// dialog turns one gate prompt into one elicitation. Everything the gate
// writes before its first read is the prompt; that read returns the single
// answer line, later reads return EOF (which the gate takes as "no").
type dialog struct {
	a    *Approver
	call *asking

	mu     sync.Mutex // the gate may write (a newline on cancel) while a read is pending
	prompt bytes.Buffer
	reply  io.Reader
}

func (d *dialog) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reply == nil {
		d.prompt.Write(p)
	}
	return len(p), nil
}

func (d *dialog) Read(p []byte) (int, error) {
	d.mu.Lock()
	r := d.reply
	prompt := d.prompt.String()
	d.mu.Unlock()
	if r == nil {
		r = strings.NewReader(d.a.ask(d.call, prompt) + "\n")
		d.mu.Lock()
		d.reply = r
		d.mu.Unlock()
	}
	return r.Read(p)
}

func (d *dialog) Close() error { return nil }

// ask shows the gate's prompt to the person and returns "y" only for an
// explicit approval. Any other outcome returns a short word for the gate's
// audit log ("declined", "timeout", ...), which the gate takes as a no.
func (a *Approver) ask(call *asking, prompt string) string {
	msg, ok := review(prompt)
	if !ok {
		return "too large to show in a dialog"
	}
	ctx, cancel := context.WithTimeout(call.ctx, a.timeout)
	defer cancel()
	res, err := call.ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: approveSchema()})
	switch {
	case err != nil && call.ctx.Err() != nil:
		return "cancelled"
	case err != nil && ctx.Err() != nil:
		return "timeout"
	case err != nil:
		return "elicitation failed"
	case res.Action == "decline":
		return "declined"
	case res.Action == "cancel":
		return "dismissed"
	case res.Action != "accept":
		return "unknown action"
	}
	if ok, _ := res.Content["approve"].(bool); !ok {
		return "accepted without approve"
	}
	return "y"
}

// approveSchema is the one-field form the client shows under the change. A
// required boolean, so "accept" alone (an empty form) is not consent.
func approveSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"approve": {Type: "boolean", Title: "Write this change to disk",
				Description: "Tick and accept to write the change shown above. Decline or cancel to refuse."},
		},
		Required: []string{"approve"},
	}
}

// review turns the gate's terminal prompt into the dialog's message. The
// gate has already made every untrusted character visible
// (display.Sanitize) and writes no colour unless asked to, so only the
// terminal's question is replaced by the dialog's. ok is false when the
// prompt is too large to show whole, or is not whole (the gate offers to
// page the rest, which a dialog cannot do).
func review(prompt string) (msg string, ok bool) {
	prompt = strings.TrimSpace(prompt)
	if len(prompt) > MaxReviewBytes || strings.Contains(prompt, "not shown; answer a") {
		return "", false
	}
	if i := strings.LastIndex(prompt, "\n"); i >= 0 && strings.HasPrefix(prompt[i+1:], "Apply?") {
		prompt = prompt[:i]
	}
	return prompt + "\n\nNothing is written unless you tick approve and accept.", true
}

// asker is the part of an MCP session the Approver needs.
type asker interface {
	InitializeParams() *mcp.InitializeParams
	Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

type sessionKey struct{}

func withSession(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, asker(ss))
}

func sessionFrom(ctx context.Context) asker {
	a, _ := ctx.Value(sessionKey{}).(asker)
	return a
}

// canElicit reports whether the client declared form elicitation at
// initialize: the only way this server can ask a person anything. (A client
// declaring elicitation without modes is taken to mean form, as the spec
// says for backward compatibility.)
func canElicit(ss asker) bool {
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}
