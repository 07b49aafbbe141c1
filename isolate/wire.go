package isolate

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
)

// The protocol between parent and child is JSON lines on the child's stdin
// and stdout, like the guest's own (guest/proto): the parent writes one
// hello, the child answers one ready, then each proto.Request line gets
// exactly one reply line. The child's stderr is kept only for diagnostics.
//
// The findings a request or reply carries (request.Recall, reply.Found:
// a findings cache, 768 KB for Go's source tree) follow their line raw,
// its length in the line (RecallBytes, FoundBytes): in the line, as
// JSON's base64, encoding and decoding them took 9 ms of each one-shot
// isolated grep of that tree.

// hello is the parent's first line: what the child must do.
type hello struct {
	Plan  Plan       `json:"plan"`
	Probe *probeSpec `json:"probe,omitempty"`
}

// ready is the child's first line: set up or failed, and at which step.
type ready struct {
	OK       bool          `json:"ok"`
	Step     string        `json:"step,omitempty"`
	Err      string        `json:"err,omitempty"`
	Landlock string        `json:"landlock,omitempty"` // what the Landlock step did
	Seccomp  string        `json:"seccomp,omitempty"`  // what the seccomp step did
	Keyring  *keyringState `json:"keyring,omitempty"`  // the session keyring just before seccomp
	Probe    []ProbeResult `json:"probe,omitempty"`
}

// keyringState is what the child saw of its session keyring just before
// seccomp, for the doctor and the tests.
type keyringState struct {
	ID   int    `json:"id,omitempty"`
	Keys int    `json:"keys"`
	Err  string `json:"err,omitempty"`
}

// request is one call: a proto.Request line, and (additively) whether
// the parent wants to know what the call touched.
type request struct {
	proto.Request
	// Observe asks for the paths the call opened, listed and described,
	// in reply.Touched (a recording's --record-files).
	Observe bool `json:"observe,omitempty"`
	// Recall is findings for the child's view to remember before the
	// call (confine.Findings' MarshalBinary): the findings cache the
	// parent read, sent with each child's first call, after the line
	// (RecallBytes long).
	Recall      []byte `json:"-"`
	RecallBytes int    `json:"recall_bytes,omitempty"`
	// Report asks for what the child's view found during the call, in
	// reply.Found, for the findings cache the parent keeps.
	Report bool `json:"report,omitempty"`
	// Weights is the folders for the child's splitter to remember before
	// the call: the weights file the parent read, sent with each child's
	// first call that walks a tree (host/fanout LoadWeights).
	Weights []proto.FolderWeight `json:"weights,omitempty"`
	// Learn asks for what the child's splitter has learned, when a grep
	// taught it more, in reply.Learned, for the weights file the parent
	// keeps.
	Learn bool `json:"learn,omitempty"`
}

// reply answers one request. Err is a runner failure (the guest could not
// run the call), distinct from a tool error the model should read.
type reply struct {
	Resp proto.Response `json:"resp"`
	Err  string         `json:"err,omitempty"`
	// Restart asks the parent to replace this child: the call overran its
	// deadline, and a guest stuck in computation cannot be stopped inside
	// the process (see host/runner), only by killing the process.
	Restart bool `json:"restart,omitempty"`
	// Touched is what the call touched, when the request asked. The
	// parent only passes these paths on: whoever takes files from them
	// (host/recording) reads each through its own confined view again.
	Touched []confine.Touch `json:"touched,omitempty"`
	// Found is what the child's view found during the call, when the
	// request asked (Report): confine.Findings' MarshalBinary, after the
	// line (FoundBytes long).
	Found      []byte `json:"-"`
	FoundBytes int    `json:"found_bytes,omitempty"`
	// Learned is every folder the child's splitter keeps, when the
	// request asked (Learn) and a grep has taught it more since the
	// child last told.
	Learned []proto.FolderWeight `json:"learned,omitempty"`
}

// maxTrailer bounds what may follow a line: the largest findings cache
// (confine's bound on the file).
const maxTrailer = 256 << 20

// writeLine writes v as one JSON line, then trailer raw.
func writeLine(w io.Writer, v any, trailer []byte) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return err
	}
	if len(trailer) > 0 {
		_, err = w.Write(trailer)
	}
	return err
}

// readTrailer reads the n bytes that follow a line.
func readTrailer(r io.Reader, n int) ([]byte, error) {
	if n < 0 || n > maxTrailer {
		return nil, fmt.Errorf("isolate: %d bytes announced after a line", n)
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// probeSpec asks the child to try escapes instead of serving calls: the
// doctor and the tests use it. The parent alone writes the hello, so this
// is no way in for the model.
type probeSpec struct {
	Dial    string   `json:"dial,omitempty"`     // a TCP address of the parent's to connect to
	HostPID int      `json:"host_pid,omitempty"` // a host process to signal (signal 0)
	Read    []string `json:"read,omitempty"`     // paths (child's view) that must not be readable
	Hold    bool     `json:"hold,omitempty"`     // stay alive until stdin closes, so /proc can be inspected
}

// ProbeResult is one escape attempt from inside the child. Blocked is true
// when the attempt failed, which is the outcome wanted.
type ProbeResult struct {
	Name    string `json:"name"`
	Blocked bool   `json:"blocked"`
	Detail  string `json:"detail"`
}
