// Package assembly opens one session's sandbox from one [Options] value:
// the root (and the rule on how many roots), the home refusal, the
// compile cache, the policy with moat's own paths protected, the
// catalogue, the redactor, the write gate and who approves its
// proposals (and whether writes are offered at all: never to a model
// with no terminal to approve them on), the recorder of --record, the
// isolated or in-process executor, and the engine on top; and one Close
// that closes them in the reverse order.
//
// Every command that runs the tools (moat ask, chat, tool, mcp, replay;
// doctor for the plan alone) opens its sandbox here, so the decisions
// are made once. It parses no flags and prints nothing but notes (a
// cache that is not the one asked for, isolation that is missing, an
// --audit that records nothing): cmd/moat turns its flags into Options
// and its errors ([Error], whose [Kind] is the exit status) into text.
package assembly

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/limits"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/runner"
	"github.com/moatdev/moat/host/toolspec"
	"github.com/moatdev/moat/isolate"
)

// Options are everything a session's sandbox is opened from.
type Options struct {
	// Roots are the folders the tools see; none is ".". With several,
	// each is a root of its own, named by its label ([AddRoot],
	// host/confine NewRoots).
	Roots []string
	// Limits are the limits and lists that change what the tools answer,
	// and how tightly a call is held: the resolver ("" is auto), the
	// isolation ("" is auto), the deadline (0 is the runner's 30s) and
	// the redaction.
	Limits limits.Options
	// CacheDir is the compile cache asked for ("": the user's cache
	// folder + /moat); see [Options.Cache].
	CacheDir string
	// AllowHome lets a root be a home folder or above one.
	AllowHome bool
	// ConfigFiles are the config files this command read or would read
	// (--config, $MOAT_CONFIG, the default one): no proposal may write
	// them, nor any other of moat's own paths ([Options.OwnPaths]).
	ConfigFiles []string
	// Writes says whether write proposals are offered and who approves
	// them.
	Writes Writes
	// Record, when not nil, records the session (--record).
	Record *Record
	// Notes gets the notices of opening (nil: discarded).
	Notes io.Writer
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// HasTerminal tells whether a person can be asked at a terminal (nil:
	// gate.HasTerminal).
	HasTerminal func() bool
	// OneShot says the process ends after one call (moat tool): the Go
	// memory of the process that runs its guests is then held to
	// [OneShotHeapLimit].
	OneShot bool

	cache *Cache // decided on first use, then kept (copies share it)
}

// Kind is what an [Error] is, and so the command's exit status.
type Kind int

const (
	// Usage is a command line that is wrong whatever the machine holds
	// (exit status 2).
	Usage Kind = iota + 1
	// Failure is a world that is not as the command line says: a root
	// that is not there, a file that cannot be written (exit status 1).
	Failure
	// NoIsolation is --isolate require where isolation cannot start
	// (exit status 4).
	NoIsolation
)

// Error is a refusal to open, of a kind.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &Error{Kind: Usage, Msg: fmt.Sprintf(format, args...)}
}

func failf(format string, args ...any) error {
	return &Error{Kind: Failure, Msg: fmt.Sprintf(format, args...)}
}

// Plan is what the options come to before anything is started: the
// guest runner's configuration and the isolation mode.
type Plan struct {
	Runner runner.Config
	Mode   isolate.Mode
}

// Resolve checks the options and makes them a [Plan]. The root is
// checked again (it may have gone since it was given, and the default "."
// is never given). A value that does not parse is a Usage error, a root
// that is not there or cannot be read a Failure, a home folder a Usage
// error.
func (o *Options) Resolve() (Plan, error) {
	kind, err := confine.ParseKind(or(o.Limits.Resolver, "auto"))
	if err != nil {
		return Plan{}, usagef("--resolver: %v", err)
	}
	mode, err := isolate.ParseMode(or(o.Limits.Isolate, "auto"))
	if err != nil {
		return Plan{}, usagef("--isolate: %v", err)
	}
	dirs, err := o.dirs()
	if err != nil {
		return Plan{}, err
	}
	cfg := runner.Config{
		Root: dirs[0].Path, Resolver: kind, Deny: o.Limits.Deny, Allow: o.Limits.Allow,
		CacheDir: o.Cache().Dir, Timeout: o.Limits.Timeout, NoRedact: o.Limits.NoRedact,
		HeapLimit: o.heapLimit(),
	}
	if len(dirs) > 1 {
		cfg.Root, cfg.Roots = "", dirs
	}
	cfg.Findings = runner.FindingsName(cfg)
	cfg.Weights = runner.WeightsName(cfg)
	return Plan{Runner: cfg, Mode: mode}, nil
}

// OneShotHeapLimit is the soft limit on the Go memory of the process that
// runs a one-shot call's guests (runner.Config.HeapLimit): a grep of Go's
// source tree keeps about 12 MiB live, and without the limit the heap
// grew to 30 MiB between collections; at 28 MiB the process's peak is
// about 11 MiB less, for the same CPU time (BENCHMARKS.md).
const OneShotHeapLimit = 28 << 20

// heapLimit is the runner's HeapLimit: OneShotHeapLimit for a one-shot
// call, none for a session, whose memory of what it found in the files
// may hold more than that.
func (o *Options) heapLimit() int64 {
	if o.OneShot {
		return OneShotHeapLimit
	}
	return 0
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (o *Options) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

func (o *Options) notes() io.Writer {
	if o.Notes == nil {
		return io.Discard
	}
	return o.Notes
}

// Sandbox is one opened session's sandbox.
type Sandbox struct {
	// Engine is the one path every call takes.
	Engine *engine.Engine
	// Recorder records the session; nil without [Options.Record].
	Recorder *Recorder
	// Root is the root's absolute path; "" with several roots.
	Root string
	// Roots are the session's roots with their labels: one, labelled
	// ".", or several.
	Roots []confine.Dir
	// Writes is the --writes in effect: "ask" when proposals are
	// offered, "deny" when not (asked, or no terminal to approve on).
	Writes string

	closers []func() error // in the order opened
}

// Close closes what Open opened, the last opened first: the engine (and
// with it the executor and the gate), then the recorder's view of the
// root. It returns the first error.
func (s *Sandbox) Close() error {
	var first error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	s.closers = nil
	return first
}

// Open opens the sandbox the options describe: it resolves the plan,
// decides whether writes are offered, starts the recording (written at
// once, so a file that cannot be one is refused before the session),
// builds the policy, the catalogue, the redactor and the gate, starts
// the executor (isolated as the plan says) and the engine. On an error
// everything opened so far is closed.
func Open(ctx context.Context, o Options) (sb *Sandbox, err error) {
	plan, err := o.Resolve()
	if err != nil {
		return nil, err
	}
	cfg := plan.Runner
	sb = &Sandbox{Root: cfg.Root, Roots: cfg.Dirs(), Writes: o.decideWrites()}
	defer func() {
		if err != nil {
			sb.Close()
			sb = nil
		}
	}()
	if o.Record != nil {
		if sb.Recorder, err = o.startRecording(cfg, sb.Writes); err != nil {
			return sb, err
		}
		sb.closers = append(sb.closers, sb.Recorder.close)
	}
	notes := o.notes()
	o.Cache().Note(notes)
	pol, err := policy.New(o.Limits.Deny, o.Limits.Allow)
	if err != nil {
		return sb, usagef("%v", err)
	}
	pol.Protect(o.OwnPaths()...)
	cat, err := toolspec.New()
	if err != nil {
		return sb, err
	}
	var red *redact.Redactor
	if !o.Limits.NoRedact {
		red = redact.New()
	}
	p, err := o.proposer(cfg.Dirs(), pol, red, sb.Recorder)
	if err != nil {
		return sb, err
	}
	// Until the engine holds it, the proposer (an audit log, say) is
	// closed here on every failure.
	closeProposer := func() {
		if cl, ok := p.(io.Closer); ok {
			cl.Close()
		}
	}
	ex, err := isolate.Start(ctx, plan.Mode, cfg, notes)
	if err != nil {
		closeProposer()
		return sb, &Error{Kind: NoIsolation, Msg: err.Error()}
	}
	eng, err := engine.New(engine.Options{Catalog: cat, Policy: pol, Limits: o.Limits.Guest(), Exec: ex, Proposer: p, Root: cfg.Root, Roots: cfg.Roots, Redactor: red})
	if err != nil {
		ex.Close()
		closeProposer()
		return sb, err
	}
	sb.Engine = eng
	sb.closers = append(sb.closers, eng.Close)
	return sb, nil
}
