package agent

import "errors"

// Sentinel errors. Every failure the loop returns wraps one of them in an
// [*Error] whose message is written for the person at the terminal.
var (
	ErrUnreachable   = errors.New("agent: model server unreachable")
	ErrModelNotFound = errors.New("agent: model not found")
	ErrNoTools       = errors.New("agent: model does not support tools")
	ErrNoModel       = errors.New("agent: no usable model installed")
	ErrHTTP          = errors.New("agent: model server answered with an error")
	ErrStream        = errors.New("agent: reply broke off")
	ErrTimeout       = errors.New("agent: no reply in time")
	ErrTurnCap       = errors.New("agent: turn cap reached")
	ErrContextFull   = errors.New("agent: conversation does not fit the context window")
	// ErrCutOff: the server stopped the reply at a length limit (done_reason
	// or finish_reason "length"); what it sent is not a whole answer.
	ErrCutOff = errors.New("agent: reply cut off by the server")
	// ErrEmptyReply: a reply with no answer and no call, again after the
	// model was told so once.
	ErrEmptyReply = errors.New("agent: empty reply")
)

// Error is a failure described for the person at the terminal: Msg says
// what happened and what to do; Kind is one of the sentinels above.
type Error struct {
	Kind error
	Msg  string
	Err  error // the underlying cause, if any
}

func (e *Error) Error() string   { return e.Msg }
func (e *Error) Is(t error) bool { return t == e.Kind }
func (e *Error) Unwrap() error   { return e.Err }
func fail(kind error, cause error, msg string) *Error {
	return &Error{Kind: kind, Msg: msg, Err: cause}
}
