package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/host/display"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/gate"
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

// Approver is the engine's Proposer for MCP. It does not check, show or
// write anything itself: it runs the approval gate (host/gate), with the
// same checks, the same diff, the same apply rules and the same audit log,
// and gives the gate an [Elicitation] as its reviewer instead of the
// terminal. The session to ask through travels in the call's context,
// from the tools/call handler to the reviewer; nothing is handed over
// through shared state.
//
// A client without elicitation never reaches the gate: the proposal is
// refused before anything is prepared.
//
// Proposals are asked one at a time, and the gate prepares each after the
// previous one was applied or refused, so every diff is against what is on
// disk.
type Approver struct {
	gate engine.Proposer
	el   *Elicitation
	turn chan struct{} // held for the whole of one proposal
}

// NewApprover builds an Approver. newGate builds the approval gate given
// the reviewer it must use (for host/gate: Options.Reviewer). timeout <= 0
// means [DefaultApproveTimeout].
func NewApprover(timeout time.Duration, newGate func(gate.Reviewer) (engine.Proposer, error)) (*Approver, error) {
	if timeout <= 0 {
		timeout = DefaultApproveTimeout
	}
	a := &Approver{el: &Elicitation{Timeout: timeout}, turn: make(chan struct{}, 1)}
	g, err := newGate(a.el)
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
	return a.gate.Propose(ctx, tool, args)
}

// Elicitation is the gate's [gate.Reviewer] for MCP: one form elicitation
// per change, through the session in the call's context. The message is
// the gate's review (header, whole diff, the file and action again, the
// question); the form has a required approve box and an optional reason.
// Only accept with approve ticked approves. Approve unticked, or decline,
// is the person's no (with their reason, if they wrote one); cancel or no
// answer within Timeout is no answer; an error is a failed dialog. Each is
// told to the model as exactly that.
//
// A dialog cannot page like a terminal, so a review longer than
// [MaxReviewBytes] is not shown: the model is told to split the change.
type Elicitation struct {
	Timeout time.Duration // 0 means DefaultApproveTimeout
}

// Review implements [gate.Reviewer].
func (e *Elicitation) Review(ctx context.Context, r *gate.Review) gate.Verdict {
	ss := sessionFrom(ctx)
	if ss == nil || !canElicit(ss) {
		return gate.Verdict{Outcome: gate.Unavailable, Reason: "this MCP client cannot show an approval dialog (it does not support elicitation)"}
	}
	if r.Cut {
		return gate.Verdict{Outcome: gate.TooLarge, Reason: fmt.Sprintf("the diff has %d lines, more than the %d a person is shown", r.DiffLines, gate.MaxDiffLines)}
	}
	msg := message(r)
	if len(msg) > MaxReviewBytes {
		return gate.Verdict{Outcome: gate.TooLarge, Reason: fmt.Sprintf("the review is %d KiB, more than the %d KiB an approval dialog shows", (len(msg)+1023)/1024, MaxReviewBytes/1024)}
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = DefaultApproveTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := ss.Elicit(tctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: approveSchema()})
	switch {
	case err != nil && ctx.Err() != nil:
		return gate.Verdict{Outcome: gate.Cancelled, Reason: "the call was cancelled"}
	case err != nil && tctx.Err() != nil:
		return gate.Verdict{Outcome: gate.Unanswered, Reason: fmt.Sprintf("no answer to the approval dialog within %v", timeout)}
	case err != nil:
		return gate.Verdict{Outcome: gate.Failed, Reason: "the approval dialog failed: " + display.Line(err.Error())}
	}
	reason, _ := res.Content["reason"].(string)
	reason = gate.Reason(reason)
	switch res.Action {
	case "accept":
		switch approve, ok := res.Content["approve"].(bool); {
		case ok && approve:
			return gate.Verdict{Outcome: gate.Approved}
		case ok:
			return gate.Verdict{Outcome: gate.Declined, Reason: reason}
		}
		return gate.Verdict{Outcome: gate.Unanswered, Reason: "the approval dialog was accepted without an approve answer"}
	case "decline":
		return gate.Verdict{Outcome: gate.Declined, Reason: reason}
	case "cancel":
		return gate.Verdict{Outcome: gate.Unanswered, Reason: "the user dismissed the approval dialog"}
	}
	return gate.Verdict{Outcome: gate.Failed, Reason: fmt.Sprintf("the client answered the approval dialog with an unknown action %q", display.Line(res.Action))}
}

// approveSchema is the form the client shows under the change: a required
// boolean, so "accept" alone (an empty form) is not consent, and an
// optional reason for the model.
func approveSchema() *jsonschema.Schema {
	maxLen := gate.MaxReasonBytes
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"approve": {Type: "boolean", Title: "Write this change to disk",
				Description: "Tick and accept to write the change shown above. Decline or cancel to refuse."},
			"reason": {Type: "string", Title: "If not: tell the model why (optional)", MaxLength: &maxLen,
				Description: "Leave approve unticked, write why, and accept: the model is told your reason."},
		},
		Required: []string{"approve"},
	}
}

// message is the dialog's text: the gate's review, already safe to show
// (every untrusted character escaped, no colour), then the file and action
// again and the question, as at the terminal.
func message(r *gate.Review) string {
	var b strings.Builder
	for _, l := range r.Header {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	for _, l := range r.Diff {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	if r.Warning != "" {
		b.WriteString(r.Warning + "\n")
	}
	b.WriteString("moat: " + r.Summary() + "\n")
	b.WriteString(r.Question() + " Nothing is written unless you tick approve and accept.")
	return b.String()
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
