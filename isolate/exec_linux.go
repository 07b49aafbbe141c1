package isolate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/fanout"
	"github.com/moatdev/moat/host/runner"
)

// startupLimit bounds how long a child may take to set up and compile or
// load the guest (a cold compile is ~0.75 s on this project's machines);
// past it the child is killed rather than hang the session.
const startupLimit = 60 * time.Second

// stderrTail is how much of a dying child's stderr is kept for the error.
const stderrTail = 4 << 10

// child is one running sandbox process and its pipes.
type child struct {
	cmd     *exec.Cmd
	in      *os.File // requests
	out     *bufio.Reader
	outf    *os.File
	stderr  *tailBuffer
	done    chan struct{} // closed once the child is reaped
	waitErr error
	ready   ready
	// keyringErr is why the forking thread could not join a fresh
	// session keyring (a container whose seccomp profile forbids keyctl).
	keyringErr error
	// recalled: the findings cache went with a call (request.Recall);
	// weighed: the weights file (request.Weights).
	recalled, weighed bool
}

// spawn starts the child for plan and reads its ready line.
//
// The fork happens on a goroutine locked to its own OS thread, which sets
// no_new_privs first: the child inherits it on its first thread, and every
// thread the child's Go runtime creates later inherits it from that one, so
// no thread of the child is ever without it. The same thread must outlive
// the child, because Pdeathsig fires when the forking thread exits, not the
// process; it waits for the child and then exits with its goroutine (a
// locked thread is never reused), taking its no_new_privs with it. The
// same thread joins a fresh anonymous session keyring before the fork, for
// the same reason: the child's threads all descend from it
// (keyring_linux.go).
func spawn(ctx context.Context, h hello) (*child, error) {
	p := h.Plan
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, &StepError{Step: "pipe", Err: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, &StepError{Step: "pipe", Err: err}
	}
	c := &child{in: inW, outf: outR, out: bufio.NewReaderSize(outR, 64<<10), stderr: &tailBuffer{max: stderrTail}, done: make(chan struct{})}
	cmd := &exec.Cmd{
		Path:   "/proc/self/exe",
		Args:   []string{"moat", ChildArg},
		Env:    p.Env,
		Dir:    "/",
		Stdin:  inR,
		Stdout: outW,
		Stderr: c.stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:                 p.Cloneflags,
			UidMappings:                idMaps(p.UIDMap),
			GidMappings:                idMaps(p.GIDMap),
			GidMappingsEnableSetgroups: p.Setgroups,
			Pdeathsig:                  syscall.SIGKILL,
		},
	}
	c.cmd = cmd
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			started <- &StepError{Step: "no_new_privs", Err: err}
			close(c.done)
			return
		}
		c.keyringErr = joinFreshKeyring()
		if err := cmd.Start(); err != nil {
			started <- &StepError{Step: "clone", Err: err}
			close(c.done)
			return
		}
		started <- nil
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	err = <-started
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	stop := context.AfterFunc(ctx, c.kill)
	defer stop()
	guard := time.AfterFunc(startupLimit, c.kill)
	defer guard.Stop()
	if err := writeLine(c.in, h, nil); err != nil {
		c.kill()
		return nil, c.deathError("sending the plan", err)
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		c.kill()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.deathError("setting up", err)
	}
	if err := json.Unmarshal(line, &c.ready); err != nil {
		c.kill()
		return nil, fmt.Errorf("isolate: child's ready line: %w", err)
	}
	if !c.ready.OK {
		c.kill()
		if c.ready.Step != "" {
			return nil, &StepError{Step: c.ready.Step, Err: errors.New(c.ready.Err)}
		}
		return nil, errors.New("isolate: child: " + c.ready.Err)
	}
	return c, nil
}

func idMaps(m []IDMap) []syscall.SysProcIDMap {
	out := make([]syscall.SysProcIDMap, len(m))
	for i, x := range m {
		out[i] = syscall.SysProcIDMap{ContainerID: x.Inside, HostID: x.Outside, Size: x.Size}
	}
	return out
}

// roundTrip sends one request and reads its reply. A cancelled ctx kills
// the child: a call cannot be taken back from the guest any other way.
func (c *child) roundTrip(ctx context.Context, req request) (reply, error) {
	stop := context.AfterFunc(ctx, c.kill)
	defer stop()
	var rep reply
	obs := confine.ObserverFrom(ctx)
	req.Observe = obs != nil
	req.RecallBytes = len(req.Recall)
	if err := writeLine(c.in, req, req.Recall); err != nil {
		return rep, err
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(line, &rep); err != nil {
		return rep, fmt.Errorf("bad reply: %w", err)
	}
	if rep.Found, err = readTrailer(c.out, rep.FoundBytes); err != nil {
		return rep, fmt.Errorf("bad reply: %w", err)
	}
	if obs != nil {
		for _, t := range rep.Touched {
			obs.Touched(t.Path, t.Kind)
		}
	}
	return rep, nil
}

func (c *child) kill() {
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
}

// stop kills the child, reaps it and closes the parent's pipe ends.
func (c *child) stop() {
	c.kill()
	<-c.done
	c.in.Close()
	c.outf.Close()
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// deathError explains a child that stopped answering: its exit status and
// the end of its stderr (a Go panic, usually).
func (c *child) deathError(during string, err error) error {
	<-c.done
	msg := fmt.Sprintf("%s: %v", during, err)
	if c.waitErr != nil {
		msg += " (" + c.waitErr.Error() + ")"
	}
	if t := bytes.TrimSpace(c.stderr.Bytes()); len(t) > 0 {
		msg += ": " + string(t)
	}
	return fmt.Errorf("%w while %s", ErrChildDied, msg)
}

// childExec is the parent's executor: one child per session, calls
// serialised, a dead child restarted once per call.
type childExec struct {
	h      hello
	mu     sync.Mutex // guards c, closed and found; held for a whole call
	c      *child
	closed bool
	// findings is the findings cache's path ("": none), which the parent
	// keeps for the child: what it held (recall, encoded, once loaded)
	// goes to each child with its first call that reads a tree's files
	// (recallFor), and what the children found in the calls (found) is
	// added to it at Close.
	findings string
	loaded   bool
	recall   []byte
	found    confine.Findings
	// weights is the weights file's path ("": none), which the parent
	// keeps for the child the same way: what it held goes to each child
	// with its first call that walks a tree (weightsFor), and what the
	// child learned (learned, the latest it told) is written at Close.
	weights     string
	weighed     bool
	held        []proto.FolderWeight
	learned     []proto.FolderWeight
	learnedSome bool
}

var _ engine.Executor = (*childExec)(nil)

// newChildExec is the executor of children of plan, which keeps the
// findings cache at findings and the weights file at weights ("": none)
// for them. The cache is read at the first call that reads a tree's
// files (a grep, proto.ReadsFiles and WalksTree: recallFor), not before:
// a call that reads one file would spend longer reading it than finding
// in that file; the weights at the first that walks one.
func newChildExec(plan Plan, findings, weights string) *childExec {
	return &childExec{h: hello{Plan: plan}, findings: findings, weights: weights}
}

// weightsFor is the folders to send with req to a child that has not had
// them: what a child before it learned in this session, else the weights
// file's, read once, at the first call that walks a tree; nil for other
// calls and where there is none. e.mu is held.
func (e *childExec) weightsFor(req proto.Request) []proto.FolderWeight {
	if e.weights == "" || !proto.ToolIs(req.Tool, proto.WalksTree) {
		return nil
	}
	if e.learnedSome {
		return e.learned
	}
	if !e.weighed {
		e.weighed = true
		e.held = fanout.LoadWeights(e.weights)
	}
	return e.held
}

// recallFor is the findings cache, encoded, to send with req to a child
// that has not had it: read once, at the first call that walks a tree
// reading its files; nil for other calls and where there is none. e.mu
// is held.
func (e *childExec) recallFor(req proto.Request) []byte {
	if e.findings == "" || !proto.ToolIs(req.Tool, proto.ReadsFiles|proto.WalksTree) {
		return nil
	}
	if !e.loaded {
		e.loaded = true
		if fd, err := confine.LoadCache(e.findings); err == nil && fd.Len() > 0 {
			e.recall, _ = fd.MarshalBinary()
		}
	}
	return e.recall
}

// Exec sends req to the child. If the child dies during the call it is
// restarted and the call retried once; a second death is ErrChildDied.
func (e *childExec) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return proto.Response{}, errors.New("isolate: executor is closed")
	}
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		if e.c == nil {
			c, err := spawn(ctx, e.h)
			if err != nil {
				return proto.Response{}, fmt.Errorf("isolate: restarting the sandbox child: %w", err)
			}
			e.c = c
		}
		r := request{Request: req, Report: e.findings != "", Learn: e.weights != ""}
		if !e.c.recalled {
			r.Recall = e.recallFor(req)
			e.c.recalled = r.Recall != nil
		}
		if !e.c.weighed {
			r.Weights = e.weightsFor(req)
			e.c.weighed = r.Weights != nil
		}
		rep, err := e.c.roundTrip(ctx, r)
		if err == nil && rep.Learned != nil && e.weights != "" {
			e.learned, e.learnedSome = rep.Learned, true
		}
		if err == nil && len(rep.Found) > 0 && e.findings != "" {
			// The child's findings are trusted as its answers are: it
			// reads the files themselves.
			var fd confine.Findings
			if fd.UnmarshalBinary(rep.Found) == nil {
				e.found.Add(fd)
			}
		}
		if err == nil {
			if rep.Restart {
				e.c.stop()
				e.c = nil
			}
			if rep.Err != "" {
				return rep.Resp, errors.New(rep.Err)
			}
			return rep.Resp, nil
		}
		c := e.c
		e.c = nil
		c.stop()
		if ctx.Err() != nil {
			return proto.Response{}, ctx.Err()
		}
		last = c.deathError("running "+req.Tool, err)
	}
	return proto.Response{}, fmt.Errorf("%w (restarted once, died again)", last)
}

// Close kills the child and waits for it.
func (e *childExec) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.c != nil {
		e.c.stop()
		e.c = nil
	}
	if e.findings != "" && e.loaded {
		// Written back only by a session that read it (recallFor).
		confine.SaveCache(e.findings, e.found) // a cache: one not saved is found in again
		e.found = confine.Findings{}
	}
	if e.weights != "" && e.learnedSome && !slices.Equal(e.learned, fanout.LoadWeights(e.weights)) {
		fanout.SaveWeights(e.weights, e.learned) // a cache: one not saved is learned again
		e.learnedSome = false
	}
	return nil
}

// pid is the running child's process id, 0 when none runs (tests).
func (e *childExec) pid() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		return 0
	}
	return e.c.pid()
}

// startChild starts the isolated child for cfg. The child gets the
// compile cache read-only (a writable cache would let a compromised child
// plant native code that the parent, or the next session, then runs), so a
// cold cache is filled here first, in the parent: otherwise every session's
// child would compile the guest again (~0.75 s).
func startChild(ctx context.Context, cfg runner.Config) (engine.Executor, error) {
	if cfg.CacheDir != "" {
		if err := os.MkdirAll(cfg.CacheDir, 0o700); err != nil {
			cfg.CacheDir = "" // no cache: slower, still correct
		} else if !runner.CacheWarm(cfg.CacheDir) {
			if err := warmCache(ctx, cfg); err != nil {
				return nil, err
			}
		}
	}
	plan, err := hostPlan(cfg)
	if err != nil {
		return nil, err
	}
	e := newChildExec(plan, cfg.FindingsPath(), cfg.WeightsPath())
	c, err := spawn(ctx, e.h)
	if err != nil {
		var se *StepError
		if errors.As(err, &se) && se.Step == "runner" {
			return nil, err // the guest itself failed: not an isolation problem to explain
		}
		return nil, &unavailableError{reason: explain(err, os.Geteuid(), os.ReadFile), cause: err}
	}
	e.c = c
	return e, nil
}

// hostPlan is NewPlan for this process's ids, with the bind sources'
// symlinks resolved here: the child reaches them through the old root,
// where an absolute link would resolve against the new one.
func hostPlan(cfg runner.Config) (Plan, error) {
	var err error
	if len(cfg.Roots) == 0 {
		if cfg.Root, err = filepath.EvalSymlinks(cfg.Root); err != nil {
			return Plan{}, err
		}
	}
	cfg.Roots = slices.Clone(cfg.Roots)
	for i := range cfg.Roots {
		if cfg.Roots[i].Path, err = filepath.EvalSymlinks(cfg.Roots[i].Path); err != nil {
			return Plan{}, err
		}
	}
	if cfg.CacheDir != "" {
		if cfg.CacheDir, err = filepath.EvalSymlinks(cfg.CacheDir); err != nil {
			return Plan{}, err
		}
	}
	return NewPlan(cfg, os.Getuid(), os.Getgid())
}

// warmCache compiles the guest into cfg.CacheDir in this process.
func warmCache(ctx context.Context, cfg runner.Config) error {
	r, err := runner.New(ctx, cfg)
	if err != nil {
		return err
	}
	return r.Close()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

var _ io.Writer = (*tailBuffer)(nil)
