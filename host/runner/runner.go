// Package runner runs the WASI tool guest in wazero on the confined
// filesystem: compiled once per process through an on-disk cache, long-lived
// instances serving calls over their stdin and stdout, each with a memory
// limit and a per-call deadline. It runs calls and knows no tool: splitting
// a grep over several instances is host/fanout's, a decorator around it.
//
// # Isolation
//
// The guest gets WASI and four host functions of moat's (moat.read_files,
// a batch of small files opened as path_open would open each; moat.stat,
// a path's permission bits and times, resolved as its lstat is;
// moat.walk_stop, where a split grep's shard may stop; and
// moat.claim_unit, which of its shards walks a folder), and nothing
// else: no network, a fixed fake wall clock (the monotonic clock is real,
// for the guest's own deadline), no environment, and a single preopen
// ("/") that is the confined filesystem of host/confine. Its linear memory is capped at
// [MemoryLimit]; a call that overruns its deadline loses its filesystem at
// once and is abandoned, and the next call starts a fresh instance.
//
// # Deadlines
//
// wazero can only interrupt running guest code if every loop is compiled
// with a termination check (WithCloseOnContextDone); measured here, that
// made grep 10x slower (0.49 s -> 4.99 s over a 98 MB file). moat compiles
// without it. A call past its deadline instead loses its filesystem at once
// (every later read fails), gets EOF on stdin, and is abandoned; the caller
// has its error immediately. The guest's loops are all bounded by a chunk
// of input, so an abandoned instance finishes soon after. A guest stuck in
// pure computation (a bug in the guest, not something a model's arguments
// can cause) cannot be stopped in-process: in the isolated child the parent
// then replaces the whole process (isolate), in-process it runs on until
// moat exits. TestHostileGuest shows both a memory hog and a spinning guest.
//
// What it does not protect against: a bug in wazero itself, or in the
// confined filesystem. Those are the reasons for the OS isolation layer
// (package isolate).
package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/moatdev/moat/guest"
	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
)

// MemoryLimit caps the guest's linear memory: enough for grep's chunk
// buffer and the Go runtime, small enough that a runaway guest cannot hurt
// the machine. 4096 pages of 64 KiB.
const (
	memoryLimitPages = 4096
	MemoryLimit      = memoryLimitPages * 65536
)

// Errors of a call that did not produce a result.
var (
	ErrTimeout     = errors.New("runner: the tool call took too long")
	ErrOutOfMemory = errors.New("runner: the tool ran out of memory")
	ErrCrashed     = errors.New("runner: the tool program stopped unexpectedly")
	ErrClosed      = errors.New("runner: closed")
)

// Config describes one sandbox. It is plain data so the isolated child can
// receive it over a pipe.
type Config struct {
	Root string // absolute path of the sandbox root
	// Roots, when there are several, are the sandbox's folders with their
	// labels (host/confine NewRoots), and Root is unused; with one root
	// it is empty and Root names it.
	Roots    []confine.Dir `json:",omitempty"`
	Resolver confine.Kind  // how paths are confined
	Deny     []string      // extra deny patterns
	Allow    []string      // allow patterns
	CacheDir string        // compiled-module cache; "" for none
	Timeout  time.Duration // per-call deadline; 0 means 30s
	// Parallel is how many calls run at once, each in a guest instance of
	// its own (and so how many shares host/fanout splits a grep into); 0
	// means one per CPU, at most maxParallel.
	Parallel int
	// NoRedact shows the guest the files as they are. Without it
	// (--redact, the default) the guest sees every regular file's
	// redacted view (host/confine SetRedactor): each secret host/redact
	// finds in the whole file replaced by "[redacted: RULE-ID]", so no
	// tool reads, matches or counts a secret's bytes.
	NoRedact bool
	// Findings names the findings cache file (host/confine LoadCache;
	// FindingsName makes the name) in CacheDir's findings folder: read
	// at the first call that reads a tree's files (a grep), so a file
	// found in by an earlier process and not changed since is not found
	// in again, and written back with what the runner found when it
	// closes, if it was read. "" (and NoRedact, and no CacheDir):
	// no findings cache. The isolated child has none: its parent keeps
	// it (Recall, Fresh).
	Findings string `json:",omitempty"`
	// Weights names the weights file (WeightsName makes the name) in
	// CacheDir's weights folder: where the greps before, in other
	// processes too, found the tree's work to lie, read when the runner's
	// calls are first split (host/fanout) and written back when it
	// closes, if a grep added to it. "" (and no CacheDir): none. The
	// isolated child has none: its parent keeps it.
	Weights string `json:",omitempty"`
	// HeapLimit, when not 0, is a soft limit in bytes on the Go memory of
	// the process the runner runs in (debug.SetMemoryLimit), set by Open:
	// for a process that makes one call and ends (moat tool), in which
	// the collector otherwise lets the heap grow to twice what is live
	// while the redacted views of thousands of files come and go. Below
	// it the collector runs as GOGC says; near it, more often. 0 leaves
	// the process's limit as it is.
	HeapLimit int64
}

// FindingsPath is the findings cache file's path: "" for none.
func (c Config) FindingsPath() string {
	if c.Findings == "" || c.CacheDir == "" || c.NoRedact {
		return ""
	}
	return filepath.Join(c.CacheDir, "findings", c.Findings)
}

// Dirs are the sandbox's roots: Roots, or the one root Root names.
func (c Config) Dirs() []confine.Dir {
	if len(c.Roots) > 0 {
		return c.Roots
	}
	return []confine.Dir{{Label: ".", Path: c.Root}}
}

// maxParallel bounds the instances of one runner: each holds its own Go
// runtime and buffers (tens of MiB), and a grep split over them gains
// little past the point where every core is busy.
const maxParallel = 4

// Module is the compiled guest in its wazero runtime. Compile it once per
// process; any number of Runners can share it.
type Module struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	// cached: the guest's code is in the on-disk cache; stubbed: it was
	// loaded from there through the stub cache (stubcache.go); stubKey:
	// the stub cache's file this process filed it in ("": none).
	cached, stubbed bool
	stubKey         string

	running sync.WaitGroup // instances whose guest has not returned yet
}

// Compile compiles the guest, through the on-disk cache in cacheDir when it
// is not empty. A cache that cannot be opened or yields a broken module is
// bypassed (and cleared), never fatal.
func Compile(ctx context.Context, cacheDir string) (*Module, error) {
	if CacheWarm(cacheDir) {
		defer holdCollector()()
	}
	m, err := compile(ctx, cacheDir, guest.Wasm())
	guest.ReleaseWasm() // compiled: the module's bytes need not stay resident
	if err == nil && m.cached && (m.stubKey != "" || !CacheWarm(cacheDir)) {
		// wazero has stored (or found) this guest: record that for
		// CacheWarm, with the stub cache's file when this process filed it.
		os.WriteFile(cacheMarker(cacheDir), []byte(m.stubKey), 0o600)
	}
	return m, err
}

// compileHeap is the heap Compile lets grow before a collection, loading
// the guest from a warm cache.
const compileHeap = 64 << 20

// holdCollector makes the collector wait until the heap reaches
// compileHeap, and returns what puts the process's settings back. Loading
// the guest from the cache allocates megabytes, nearly all of it garbage
// by the end, which the collector would otherwise chase several times
// over. (A cold compile allocates far more and collects as usual.)
func holdCollector() (restore func()) {
	limit := debug.SetMemoryLimit(compileHeap)
	pct := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}

// cacheConfig names the runtime settings the cached code was compiled for;
// change it with them (the memory limit, the absence of termination checks),
// so that a marker left by another configuration does not count as warm.
const cacheConfig = "mem4096-noterm"

// cacheMarker is the file that says cacheDir holds this guest, compiled by
// this wazero for this runtime configuration, on this architecture and OS.
// wazero keeps each of its versions' code apart (a test binary's wazero
// calls itself "dev"); a marker without the version would call a cache
// warm that this wazero has never filled.
func cacheMarker(cacheDir string) string {
	key := guest.BuildID()
	if key == "" {
		key = string(guest.Wasm()) // a guest built without an ID: hash it whole
	}
	id := sha256.Sum256([]byte(key))
	return filepath.Join(cacheDir, "wazero", fmt.Sprintf("moat-guest-%x-wazero-%s-%s-%s-%s", id[:8], WazeroVersion(), cacheConfig, runtime.GOARCH, runtime.GOOS))
}

// WazeroVersion is the module version of the wazero linked into this binary
// ("v1.9.0"), or "dev" when the build records none (a test binary, a build
// from a wazero checkout). wazero names its compilation cache by the same
// reading, so it is also the version `moat version` and doctor report.
func WazeroVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/tetratelabs/wazero" && dep.Version != "" && dep.Version != "(devel)" {
				return dep.Version
			}
		}
	}
	return "dev"
}

// CacheWarm reports whether cacheDir already holds the compiled guest of
// this moat binary, so that loading it is fast: its marker, and the stub
// cache's file the marker names, if it names one. A cache holding only
// other versions of the guest is cold, and so is one whose stub cache
// lost the guest's file (then the isolated child, which cannot file it,
// would load the guest the slow way every time).
func CacheWarm(cacheDir string) bool {
	if cacheDir == "" {
		return false
	}
	key, err := os.ReadFile(cacheMarker(cacheDir))
	if err != nil || len(key) > 4096 {
		return false
	}
	if len(key) > 0 {
		_, err = os.Stat(filepath.Join(cacheDir, "wazero", stubsName, string(key)))
	}
	return err == nil
}

func compile(ctx context.Context, cacheDir string, wasm []byte) (*Module, error) {
	// A cold compile of the guest is the slowest thing moat does (seconds):
	// spread it over every core.
	ctx = experimental.WithCompilationWorkers(ctx, runtime.NumCPU())
	if cacheDir != "" {
		dir := filepath.Join(cacheDir, "wazero")
		if m := compileStubbed(ctx, dir, wasm); m != nil {
			return m, nil
		}
		// wazero's own cache, where the stub cache cannot serve: one that
		// cannot be opened is skipped; one whose module does not load is
		// cleared, and the guest compiled in memory.
		if cache, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			if m, err := compileIn(ctx, cache, wasm); err == nil {
				return m, nil
			}
			os.RemoveAll(dir)
		}
	}
	m, err := compileIn(ctx, nil, wasm)
	if err != nil {
		return nil, fmt.Errorf("runner: compile guest: %w", err)
	}
	return m, nil
}

// compileIn compiles wasm in a new runtime with the wazero cache given
// (nil: none).
func compileIn(ctx context.Context, cache wazero.CompilationCache, wasm []byte) (*Module, error) {
	rt, err := newRuntime(ctx, cache)
	if err != nil {
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return &Module{rt: rt, compiled: compiled, cached: cache != nil}, nil
}

// newRuntime is a wazero runtime for the guest, with the cache given (nil:
// none), WASI and the moat host module instantiated in it.
func newRuntime(ctx context.Context, cache wazero.CompilationCache) (wazero.Runtime, error) {
	// Not WithCloseOnContextDone: its per-loop checks made grep 10x
	// slower (0.49 s -> 4.99 s over a 98 MB file). Deadlines are
	// enforced by revoking the instance's filesystem instead; see kill.
	c := wazero.NewRuntimeConfig().
		WithMemoryLimitPages(memoryLimitPages)
	if cache != nil {
		c = c.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, c)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("runner: WASI: %w", err)
	}
	if err := InstantiateHost(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("runner: host module: %w", err)
	}
	return rt, nil
}

// Close releases the runtime and every instance still running in it.
//
// It first waits, up to closeGrace, for every instance to return: closing
// the runtime under a guest that is still computing would race with it. If
// one is still running after that, the runtime is left to the process's
// exit.
func (m *Module) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { m.running.Wait(); close(done) }()
	select {
	case <-done:
		return m.rt.Close(ctx)
	case <-time.After(closeGrace):
		return nil
	}
}

// Runner executes tool calls in guest instances. It is safe for concurrent
// use: up to [Runner.Parallel] calls run at once, each in an instance of its
// own; more wait for one to finish.
type Runner struct {
	cfg  Config
	fs   *confine.FS
	mod  *Module
	owns bool // Close closes mod too

	// withTimeout gives a call its deadline: context.WithTimeout, except in
	// tests that must tell the guest's own deadline from the host's
	// without racing the two clocks (see export_test.go).
	withTimeout func(context.Context, time.Duration) (context.Context, context.CancelFunc)

	// slots holds one token per call running; its capacity is
	// Config.Parallel. Close takes every token, so it waits for the calls
	// in progress.
	slots chan struct{}

	mu      sync.Mutex  // guards idle, retired and done
	idle    []*instance // running, waiting for a call
	retired []*instance // killed, perhaps still finishing a computation
	done    bool

	// findingsOnce reads the findings cache at the first call that
	// reads a tree (recallFindings); findingsRead says it was, so that
	// Close writes it back.
	findingsOnce sync.Once
	findingsRead atomic.Bool
}

// New compiles the guest (or loads it from the cache) and opens the root.
// The instance starts on the first call.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	m, err := Compile(ctx, cfg.CacheDir)
	if err != nil {
		return nil, err
	}
	r, err := Open(m, cfg)
	if err != nil {
		m.Close(ctx)
		return nil, err
	}
	r.owns = true
	return r, nil
}

// Open starts a runner for cfg on an already compiled module, which the
// runner does not own. cfg.CacheDir is ignored.
func Open(m *Module, cfg Config) (*Runner, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	pol, err := policy.New(cfg.Deny, cfg.Allow)
	if err != nil {
		return nil, err
	}
	cfs, err := confine.NewRoots(cfg.Dirs(), cfg.Resolver, pol)
	if err != nil {
		return nil, err
	}
	if !cfg.NoRedact {
		cfs.SetRedactor(redact.New())
	}
	if cfg.HeapLimit > 0 {
		debug.SetMemoryLimit(cfg.HeapLimit)
	}
	p := cfg.Parallel
	if p <= 0 {
		p = min(runtime.NumCPU(), maxParallel)
	}
	return &Runner{cfg: cfg, fs: cfs, mod: m, withTimeout: context.WithTimeout, slots: make(chan struct{}, p)}, nil
}

// recallFindings reads the findings cache (Config.Findings) into the
// runner's view at the first call that reads a tree's files (a grep or
// its shard: proto.ReadsFiles and WalksTree), once: a call that reads one
// file would spend longer reading the cache than finding in that file.
func (r *Runner) recallFindings(tool string) {
	if r.findingsRead.Load() {
		return // the common case, once read: no more to ask
	}
	p := r.cfg.FindingsPath()
	if p == "" || !proto.ToolIs(tool, proto.ReadsFiles|proto.WalksTree) {
		return
	}
	r.findingsOnce.Do(func() {
		if fd, err := confine.LoadCache(p); err == nil {
			r.fs.Recall(fd)
		}
		r.findingsRead.Store(true)
	})
}

// Fresh is what the runner's view found since the last call, for a
// findings cache another process keeps (Config.Findings).
func (r *Runner) Fresh() confine.Findings { return r.fs.Fresh() }

// Recall makes the runner's view remember fd, from a findings cache
// another process keeps.
func (r *Runner) Recall(fd confine.Findings) { r.fs.Recall(fd) }

// Resolver is the path resolver in use.
func (r *Runner) Resolver() confine.Kind { return r.fs.Kind() }

// Parallel is how many calls the runner runs at once (Config.Parallel, its
// default applied).
func (r *Runner) Parallel() int { return cap(r.slots) }

// instance is one running guest serving calls over its stdin and stdout.
type instance struct {
	cancel context.CancelFunc
	fsctl  *confine.MountControl // revokes the instance's filesystem, and more
	stdin  *io.PipeWriter
	outR   *io.PipeReader // the guest's stdout, which out reads
	out    *bufio.Reader
	stderr *limitedBuffer
	exited chan struct{} // closed when the guest's _start returns
	err    error         // why it exited, valid after exited is closed
	// stop is the current call's proto.WalkStop (moat.walk_stop), if any.
	stop atomic.Pointer[proto.WalkStop]
}

func (r *Runner) start() (*instance, error) {
	ctx, cancel := context.WithCancel(experimental.WithMemoryAllocator(context.Background(), linearMemory()))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	mount, ctl := r.fs.Mount()
	ctx = WithMount(ctx, ctl)
	in := &instance{cancel: cancel, fsctl: ctl, stdin: inW, outR: outR, out: bufio.NewReaderSize(outR, 64<<10),
		stderr: &limitedBuffer{max: 4096}, exited: make(chan struct{})}
	ctx = withWalkStop(ctx, &in.stop)
	fsCfg := wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(mount, "/")
	mc := wazero.NewModuleConfig().
		WithName("").
		WithArgs("moat-tools").
		WithFSConfig(fsCfg).
		WithStdin(inR).
		WithStdout(outW).
		WithStderr(in.stderr).
		// A real monotonic clock, for proto.Limits.TimeLimit (wazero's
		// default advances 1 ms a reading); the wall clock stays fake.
		WithSysNanotime()
	r.mod.running.Add(1)
	go func() {
		defer r.mod.running.Done()
		mod, err := r.mod.rt.InstantiateModule(ctx, r.mod.compiled, mc)
		if mod != nil {
			mod.Close(context.Background())
		}
		in.err = err
		outW.CloseWithError(io.ErrUnexpectedEOF)
		inR.Close()
		close(in.exited)
	}()
	return in, nil
}

// Exec runs one call in an idle instance, starting one if none is idle.
// Errors mean the guest produced no answer (timeout, crash, memory); the
// text of a failed tool is in the Response. The deadline (Config.Timeout)
// starts once an instance is free for the call.
func (r *Runner) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return proto.Response{}, ctx.Err()
	}
	defer func() { <-r.slots }()
	in, err := r.take()
	if err != nil {
		return proto.Response{}, err
	}
	r.recallFindings(req.Tool)
	ctx, cancel := r.withTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	// The guest stops its own work before this deadline (proto.Limits.TimeLimit),
	// so an instance abandoned at the deadline is not left computing.
	req.Limits.TimeLimit = timeLimit(ctx)
	o := confine.ObserverFrom(ctx)
	if o != nil {
		// A recording's: what this call opens, lists and stats.
		in.fsctl.Observe(o)
	}
	if w := proto.WalkStopFrom(ctx); w != nil {
		// A shard of a split grep: where the others let it stop.
		in.stop.Store(w)
	}
	resp, err := r.call(ctx, in, req)
	// Both cleared before the instance is idle, and another call's: a
	// deferred clearing would run after the next call had set its own.
	in.stop.Store(nil)
	if o != nil {
		in.fsctl.Observe(nil)
	}
	if err == nil {
		r.mu.Lock()
		r.idle = append(r.idle, in)
		r.mu.Unlock()
	}
	return resp, err
}

// timeLimit is the time the guest is given for a call whose deadline is
// ctx's: what is left of it when the request is sent. The guest counts it
// from when it reads the request, which is later, and stops a margin
// before its end (guest/tools deadlineMargin): so its own deadline is
// always earlier than the host's, by at least that margin.
func timeLimit(ctx context.Context) int64 {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return int64(max(time.Until(dl), 1)) // 0 would mean no limit
}

// take returns an idle instance, or starts one.
func (r *Runner) take() (*instance, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return nil, ErrClosed
	}
	if n := len(r.idle); n > 0 {
		in := r.idle[n-1]
		r.idle = r.idle[:n-1]
		return in, nil
	}
	return r.start()
}

// call runs req on instance in. On any failure in is killed.
//
// The call is written and its answer read on the caller's goroutine, so a
// call hands over to the guest's goroutine and back and to nothing else;
// ctx's end kills the instance, which closes both pipes and so ends the
// write or the read at once.
func (r *Runner) call(ctx context.Context, in *instance, req proto.Request) (proto.Response, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return proto.Response{}, err
	}
	line = append(line, '\n')
	killed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { r.kill(in); close(killed) })
	var b []byte
	if _, err = in.stdin.Write(line); err == nil {
		b, err = in.out.ReadBytes('\n')
	}
	if !stop() {
		// ctx ended: the instance is killed, whatever the guest did. The
		// kill is waited for, so that once the call returns (and frees
		// its slot) the instance is among the retired Close waits for.
		<-killed
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return proto.Response{}, fmt.Errorf("%w: no answer within %v (--timeout)", ErrTimeout, r.cfg.Timeout)
		}
		return proto.Response{}, ctx.Err()
	}
	if err != nil {
		return proto.Response{}, r.fail(in, err)
	}
	var resp proto.Response
	if err := json.Unmarshal(b, &resp); err != nil {
		return proto.Response{}, r.fail(in, fmt.Errorf("runner: malformed answer from guest: %w", err))
	}
	if resp.ID != req.ID {
		r.kill(in)
		return proto.Response{}, fmt.Errorf("%w: answer to call %d, expected %d", ErrCrashed, resp.ID, req.ID)
	}
	return resp, nil
}

// fail explains why the guest stopped answering and retires the instance.
func (r *Runner) fail(in *instance, ioErr error) error {
	r.kill(in)
	// Its stdout closed, so the guest has stopped or is about to: wait
	// briefly for its exit status.
	select {
	case <-in.exited:
	case <-time.After(time.Second):
		return fmt.Errorf("%w: %v", ErrCrashed, ioErr)
	}
	msg := strings.TrimSpace(in.stderr.String())
	var exit *sys.ExitError
	switch {
	case strings.Contains(msg, "out of memory"):
		return fmt.Errorf("%w (limit %d MiB); ask for less at once (a narrower path, pattern or line range)", ErrOutOfMemory, MemoryLimit>>20)
	case errors.As(in.err, &exit):
		first, _, _ := strings.Cut(msg, "\n")
		return fmt.Errorf("%w (exit code %d): %s", ErrCrashed, exit.ExitCode(), first)
	case in.err != nil:
		if strings.Contains(in.err.Error(), "out of bounds memory access") {
			return fmt.Errorf("%w (limit %d MiB)", ErrOutOfMemory, MemoryLimit>>20)
		}
		return fmt.Errorf("%w: %v", ErrCrashed, in.err)
	}
	return fmt.Errorf("%w: %v", ErrCrashed, ioErr)
}

// kill retires an instance: its filesystem is revoked at once, so nothing
// it does from now on can read a byte, and its stdin is closed, so it exits
// at its next read. It is not waited for: without wazero's termination
// checks a guest in the middle of a long computation finishes that
// computation first (every loop of the tools is bounded by a chunk of
// input), and the caller must not wait for that. The next call starts a
// fresh instance. In the isolated child the parent's deadline kills the
// whole process instead.
func (r *Runner) kill(in *instance) {
	in.fsctl.Revoke()
	in.cancel()
	in.stdin.CloseWithError(ErrClosed)
	in.outR.CloseWithError(ErrClosed)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retired = append(r.retired, in)
}

// closeGrace bounds how long Close waits for retired instances to notice
// they were stopped before it releases the runtime under them.
const closeGrace = 5 * time.Second

// Close waits for the calls in progress, stops the guest and releases the
// runtime and the root. Calls after Close fail with ErrClosed.
func (r *Runner) Close() error {
	for range cap(r.slots) {
		r.slots <- struct{}{}
	}
	defer func() {
		for range cap(r.slots) {
			<-r.slots
		}
	}()
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return nil
	}
	r.done = true
	idle := r.idle
	r.idle = nil
	r.mu.Unlock()
	if p := r.cfg.FindingsPath(); p != "" && r.findingsRead.Load() {
		// Written back only by a runner that read it (recallFindings).
		confine.SaveCache(p, r.fs.Fresh()) // a cache: one not saved is found in again
	}
	for _, in := range idle {
		r.kill(in)
	}
	// Every call has returned (Close holds every slot) and waited for its
	// own kill, so no other kill adds to retired from here on.
	r.mu.Lock()
	retired := r.retired
	r.mu.Unlock()
	// The runtime may only be closed once no instance runs in it. One that
	// is still computing after the grace period is left to finish; its
	// runtime is then released with the process.
	timer := time.NewTimer(closeGrace)
	defer timer.Stop()
	stopped := true
	for _, in := range retired {
		if !stopped {
			break
		}
		select {
		case <-in.exited:
		case <-timer.C:
			stopped = false
		}
	}
	if !stopped {
		// Leave the runtime and the root open under the instance still
		// running: closing them now would race with it.
		return nil
	}
	if r.owns {
		r.mod.Close(context.Background())
	}
	return r.fs.Close()
}

// limitedBuffer keeps the first max bytes of the guest's stderr, which is
// only read to explain a crash.
type limitedBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
