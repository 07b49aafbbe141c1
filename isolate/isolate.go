// Package isolate runs the tool sandbox in a re-executed child process inside
// new Linux user, mount, network, PID, IPC and UTS namespaces: the fourth
// layer of moat's defences (see ARCHITECTURE.md). Even a bug in wazero, in the
// guest or in the confined filesystem must not reach the host's files or the
// network from there.
//
// The work is split the way bubblewrap and u-root split it: [NewPlan] is a
// pure function from a runner.Config to a [Plan] (clone flags, id maps,
// mounts, limits, environment) and is tested on every OS; the Linux child
// applies a Plan step by step, in bubblewrap's order (apply, in
// child_linux.go), and every failure is a [StepError] that names its step. Namespaces are only ever created at
// clone time, by re-executing /proc/self/exe with a hidden first argument
// ([ChildArg]); a Go process never calls unshare(2).
//
// # Isolation
//
// The child sees a read-only tmpfs as its root holding two read-only,
// nosuid, nodev, noexec binds: the sandbox root at /sandbox and the compiled
// module cache at /cache. There is no /proc, /dev, /etc or /tmp in its view,
// its network namespace has only a down loopback, its PID namespace holds
// only itself, it has no descriptor it was not meant to have, a fresh
// empty session keyring (keyring_linux.go), no_new_privs on every thread
// (both inherited from the thread that forked it), and once its mounts are
// made no capability in any set and Landlock wherever the kernel has it
// (files read-only beneath its two binds, TCP bind and connect denied,
// abstract unix sockets and signals scoped), on every thread in every
// build and without /proc (landlock_linux.go, nocgo_linux.go,
// cgo_linux.go). Last comes a seccomp allow-list, synchronised to all
// threads, under which every call not listed in syscalls_linux.go fails
// with ENOSYS.
//
// It does NOT protect against kernel bugs reachable from an unprivileged
// user namespace, and it does not limit CPU or memory beyond what
// runner.Config asks of wazero. Approved writes never pass through the
// child: the parent applies them (host/gate), outside the namespaces.
package isolate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/fanout"
	"github.com/moatdev/moat/host/runner"
)

// Mode is the --isolate setting.
type Mode int

const (
	// Auto isolates where the kernel allows and otherwise says once why not
	// and runs the guest in-process.
	Auto Mode = iota
	// Require refuses to run without isolation.
	Require
	// Off runs the guest in-process.
	Off
)

func (m Mode) String() string {
	switch m {
	case Auto:
		return "auto"
	case Require:
		return "require"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses --isolate.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "auto", "":
		return Auto, nil
	case "require":
		return Require, nil
	case "off":
		return Off, nil
	}
	return 0, fmt.Errorf("unknown isolation mode %q (want auto, require or off)", s)
}

// ChildArg is the hidden first argument that turns a re-executed moat into
// the sandbox child. It is not a command: the child reads its plan from the
// protocol pipe and refuses to run without one.
const ChildArg = "__moat-sandbox"

var (
	// ErrUnsupported is returned by the Linux-only parts on other systems.
	ErrUnsupported = errors.New("isolate: OS isolation needs Linux namespaces")
	// ErrUnavailable wraps every reason isolation could not start.
	ErrUnavailable = errors.New("isolate: OS isolation unavailable")
	// ErrChildDied is returned when the sandbox child keeps dying.
	ErrChildDied = errors.New("isolate: sandbox child died")
)

// StepError is a failure of one numbered step of setting up the child,
// named the way bubblewrap's messages name them ("pivot_root").
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("isolate: %s: %v", e.Step, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }

// Start returns the executor for one session. Off runs the guest in this
// process. Auto and Require start the isolated child; when it cannot start,
// Require returns an error wrapping ErrUnavailable that says why, and Auto
// writes that reason once to notes and runs the guest in this process.
func Start(ctx context.Context, mode Mode, cfg runner.Config, notes io.Writer) (engine.Executor, error) {
	if mode == Off {
		return newRunner(ctx, cfg)
	}
	ex, err := startChild(ctx, cfg)
	if err == nil {
		return ex, nil
	}
	if mode == Require {
		return nil, fmt.Errorf("%w: %v; refusing to run because --isolate require was given (use --isolate auto to go on without it)", ErrUnavailable, reasonText(err))
	}
	if notes != nil {
		fmt.Fprintf(notes, "moat: OS isolation unavailable: %s; continuing with the WASI and filesystem layers. Use --isolate require to refuse instead.\n", reasonText(err))
	}
	return newRunner(ctx, cfg)
}

// newRunner builds the executor that runs the guest in this process (the
// isolated child's, or the session's without isolation): a runner, with a
// grep split over its instances.
func newRunner(ctx context.Context, cfg runner.Config) (engine.Executor, error) {
	r, err := runner.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l := local{Executor: fanout.New(r, r.Parallel()), r: r, weights: cfg.WeightsPath()}
	if l.weights != "" {
		l.held = fanout.LoadWeights(l.weights)
		l.Remember(l.held)
	}
	return l, nil
}

// local is the runner in this process, its calls fanned out. The
// isolated child's view remembers what its parent's findings cache holds
// (Recall) and tells what it found (Fresh); its splitter, what the
// parent's weights file holds (Remember) and what it learned (Weights).
// Without isolation it keeps the weights file itself (weights: its path,
// "" for none).
type local struct {
	engine.Executor
	r       *runner.Runner
	weights string
	held    []proto.FolderWeight // what the file held
}

func (l local) Fresh() confine.Findings    { return l.r.Fresh() }
func (l local) Recall(fd confine.Findings) { l.r.Recall(fd) }

// Weights is what the splitter learned, and how many greps taught it
// (nil, 0 with a single instance: nothing is split).
func (l local) Weights() ([]proto.FolderWeight, uint64) {
	if s, ok := l.Executor.(*fanout.Splitter); ok {
		return s.Weights()
	}
	return nil, 0
}

// Remember gives the splitter another process's weights.
func (l local) Remember(ws []proto.FolderWeight) {
	if s, ok := l.Executor.(*fanout.Splitter); ok {
		s.Remember(ws)
	}
}

// Close writes the weights file back, if a grep taught the splitter
// anything the file did not hold, and closes the runner.
func (l local) Close() error {
	if ws, lessons := l.Weights(); l.weights != "" && lessons > 0 && !slices.Equal(ws, l.held) {
		fanout.SaveWeights(l.weights, ws) // a cache: one not saved is learned again
	}
	return l.Executor.Close()
}

// memory is an executor whose view's findings, and whose splitter's
// weights, another process keeps (local).
type memory interface {
	Fresh() confine.Findings
	Recall(confine.Findings)
	Weights() ([]proto.FolderWeight, uint64)
	Remember([]proto.FolderWeight)
}

// reasonText strips the sentinel's own prefix so a message does not say
// "unavailable" twice.
func reasonText(err error) string {
	var u *unavailableError
	if errors.As(err, &u) {
		return u.reason
	}
	return err.Error()
}

// unavailableError says why the child could not start, in words a person
// can act on; it matches ErrUnavailable and its cause.
type unavailableError struct {
	reason string
	cause  error
}

func (e *unavailableError) Error() string { return "isolate: " + e.reason }
func (e *unavailableError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrUnavailable}
	}
	return []error{ErrUnavailable, e.cause}
}
