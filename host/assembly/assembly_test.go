package assembly

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/limits"
	"github.com/moatdev/moat/host/recording"
)

// options are the options of a session on a fresh root holding
// notes.txt, in this process (isolation off, so the tests run anywhere),
// with a cache and a home of the test's own.
func options(t *testing.T) (Options, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("teh notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	var notes bytes.Buffer
	return Options{
		Roots: []string{root}, Limits: offLimits(),
		CacheDir: sharedCache(t), Notes: &notes,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		},
		HasTerminal: func() bool { return false },
	}, &notes
}

// offLimits are the default limits with isolation off.
func offLimits() limits.Options {
	l := limits.Defaults()
	l.Isolate = "off"
	return l
}

// sharedCache is the compile cache the tests of moat's packages share (as
// host/runner's do), so that the guest is compiled once.
func sharedCache(t *testing.T) string {
	dir := filepath.Join(os.TempDir(), "moat-test-cache-"+runtime.Version())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t *testing.T, o Options) *Sandbox {
	t.Helper()
	sb, err := Open(context.Background(), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

func toolNames(sb *Sandbox) string {
	var names []string
	for _, t := range sb.Engine.Tools() {
		names = append(names, t.Name)
	}
	return strings.Join(names, " ")
}

func TestOpenRunsACall(t *testing.T) {
	o, _ := options(t)
	sb := open(t, o)
	if abs, _ := filepath.Abs(o.Roots[0]); sb.Root != abs {
		t.Errorf("Root %q, want %q", sb.Root, abs)
	}
	res := sb.Engine.Call(context.Background(), "read_file", []byte(`{"path":"notes.txt"}`))
	if res.IsError || !strings.Contains(res.Text, "teh notes") {
		t.Errorf("read_file: %+v", res)
	}
	if res := sb.Engine.Call(context.Background(), "read_file", []byte(`{"path":"../x"}`)); !res.IsError {
		t.Errorf("read_file ../x answered %q", res.Text)
	}
}

// A model with no terminal to approve writes on is offered none; a
// person's own call (moat tool) and a client's dialog still go to the gate.
func TestNoWritesWithoutATerminal(t *testing.T) {
	for _, tc := range []struct {
		by       Approver
		terminal bool
		want     string
	}{
		{ModelAtTerminal, false, "deny"},
		{ModelAtTerminal, true, "ask"},
		{TypedAtTerminal, false, "ask"},
		{Client, false, "ask"},
	} {
		o, notes := options(t)
		o.HasTerminal = func() bool { return tc.terminal }
		o.Writes = Writes{Offer: true, By: tc.by, Audit: filepath.Join(t.TempDir(), "audit.jsonl")}
		sb := open(t, o)
		offered := strings.Contains(toolNames(sb), "propose_write")
		if sb.Writes != tc.want || offered != (tc.want == "ask") {
			t.Errorf("by %d, terminal %v: writes %s, tools %s; want %s", tc.by, tc.terminal, sb.Writes, toolNames(sb), tc.want)
		}
		said := strings.Contains(notes.String(), "nothing to audit in this run: no terminal")
		if said != (tc.want == "deny") {
			t.Errorf("by %d, terminal %v: notes %q", tc.by, tc.terminal, notes)
		}
	}
}

func TestRecorderAttachedWhenAsked(t *testing.T) {
	o, _ := options(t)
	if sb := open(t, o); sb.Recorder != nil {
		t.Fatal("a recorder without Record")
	}
	file := filepath.Join(t.TempDir(), "s.txtar")
	o.Writes = Writes{Offer: true, By: ModelAtTerminal} // no terminal: deny
	o.Limits.NoIgnore = true
	o.Record = &Record{File: file, Files: true, Session: recording.SessionInfo{Command: "ask", Model: "m"},
		Flags: func(w string) string { return "--writes " + w }}
	sb := open(t, o)
	if sb.Recorder == nil {
		t.Fatal("no recorder with Record")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the recording is not written at once: %v", err)
	}
	rec, err := recording.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	s := rec.Session
	if s.Command != "ask" || s.Writes != "deny" || s.RootName != filepath.Base(sb.Root) || !s.NoIgnore || s.NoRedact || s.Isolate != "" {
		t.Errorf("session %+v", s)
	}
	if !strings.Contains(rec.Comment, "--writes deny") {
		t.Errorf("comment %q", rec.Comment)
	}
}

func TestCloseClosesEverything(t *testing.T) {
	o, _ := options(t)
	o.Record = &Record{File: filepath.Join(t.TempDir(), "s.txtar"), Files: true}
	sb, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	view := sb.Recorder.closer.(fs.FS)
	if _, err := fs.Stat(view, "notes.txt"); err != nil {
		t.Fatalf("the recorder's view before Close: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if res := sb.Engine.Call(context.Background(), "read_file", []byte(`{"path":"notes.txt"}`)); !res.IsError {
		t.Errorf("a call after Close answered %q", res.Text)
	}
	if _, err := fs.Stat(view, "notes.txt"); err == nil {
		t.Error("the recorder's view of the root is still open after Close")
	}
	if err := sb.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func TestErrorsAreTyped(t *testing.T) {
	o, _ := options(t)
	file := filepath.Join(o.Roots[0], "notes.txt")
	for name, tc := range map[string]struct {
		change func(*Options)
		want   Kind
	}{
		"nested roots": {func(o *Options) {
			sub := filepath.Join(o.Roots[0], "sub")
			os.Mkdir(sub, 0o755)
			o.Roots = append(o.Roots, sub)
		}, Usage},
		"a root twice":   {func(o *Options) { o.Roots = append(o.Roots, o.Roots[0]) }, Usage},
		"no such root":   {func(o *Options) { o.Roots = []string{filepath.Join(t.TempDir(), "gone")} }, Failure},
		"a file as root": {func(o *Options) { o.Roots = []string{file} }, Failure},
		"home":           {func(o *Options) { o.Getenv = func(string) string { return o.Roots[0] } }, Usage},
		"above home": {func(o *Options) {
			h := filepath.Join(o.Roots[0], "me")
			os.Mkdir(h, 0o700)
			o.Getenv = func(string) string { return h }
		}, Usage},
		"the system root": {func(o *Options) { o.Roots = []string{"/"} }, Usage},
		"resolver":        {func(o *Options) { o.Limits.Resolver = "chroot" }, Usage},
		"isolate":         {func(o *Options) { o.Limits.Isolate = "maybe" }, Usage},
		"audit a folder":  {func(o *Options) { o.Writes = Writes{Offer: true, By: TypedAtTerminal, Audit: t.TempDir()} }, Failure},
		"record nowhere":  {func(o *Options) { o.Record = &Record{File: filepath.Join(t.TempDir(), "no", "s.txtar")} }, Failure},
	} {
		oo := o
		tc.change(&oo)
		sb, err := Open(context.Background(), oo)
		if err == nil {
			sb.Close()
		}
		if got := kindOf(err); got != tc.want {
			t.Errorf("%s: %v (kind %d), want kind %d", name, err, got, tc.want)
		}
	}
	// AllowHome lets a home folder through.
	oo := o
	oo.AllowHome = true
	oo.Getenv = func(string) string { return o.Roots[0] }
	if _, err := oo.Resolve(); err != nil {
		t.Errorf("AllowHome: %v", err)
	}
}

// AddRoot takes a second root, and refuses one past confine.MaxRoots.
func TestAddRoot(t *testing.T) {
	var roots []string
	var err error
	for i := range confine.MaxRoots {
		if roots, err = AddRoot(roots, fmt.Sprint("r", i)); err != nil || len(roots) != i+1 {
			t.Fatalf("root %d: %v %v", i+1, roots, err)
		}
	}
	roots, err = AddRoot(roots, "one too many")
	if err == nil || len(roots) != confine.MaxRoots || !strings.Contains(err.Error(), `more than 16 roots (the first was "r0")`) {
		t.Errorf("root %d: %v %v", confine.MaxRoots+1, roots, err)
	}
}

// Several roots resolve to the runner's labelled roots, the same base
// name made unique; one root to Root alone, as before.
func TestResolveSeveralRoots(t *testing.T) {
	o, _ := options(t)
	base := t.TempDir()
	a, b := filepath.Join(base, "x", "src"), filepath.Join(base, "y", "src")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o.Roots = []string{a, b}
	plan, err := o.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	want := []confine.Dir{{Label: "src", Path: a}, {Label: "src-2", Path: b}}
	if plan.Runner.Root != "" || !slices.Equal(plan.Runner.Roots, want) {
		t.Errorf("several roots: Root %q, Roots %v; want %v", plan.Runner.Root, plan.Runner.Roots, want)
	}
	o.Roots = []string{a}
	if plan, err = o.Resolve(); err != nil || plan.Runner.Root != a || plan.Runner.Roots != nil {
		t.Errorf("one root: %+v, %v", plan.Runner, err)
	}
}

// approveAll approves every proposal without asking.
type approveAll struct{}

func (approveAll) Review(context.Context, *gate.Review) gate.Verdict {
	return gate.Verdict{Outcome: gate.Approved}
}

// moat's own configuration is never written, even inside the root and
// approved; a plain file beside it is.
func TestOwnPathsProtected(t *testing.T) {
	o, _ := options(t)
	conf := filepath.Join(o.Roots[0], "moat.conf")
	os.WriteFile(conf, []byte("writes deny\n"), 0o600)
	o.ConfigFiles = []string{conf}
	o.Writes = Writes{Offer: true, By: Recorded, Reviewer: approveAll{}}
	sb := open(t, o)
	ctx := context.Background()
	res := sb.Engine.Call(ctx, "propose_write", []byte(`{"path":"moat.conf","content":"writes ask\n"}`))
	if b, _ := os.ReadFile(conf); string(b) != "writes deny\n" {
		t.Errorf("moat's config written: %q (answer %q)", b, res.Text)
	}
	res = sb.Engine.Call(ctx, "propose_write", []byte(`{"path":"other.txt","content":"x\n"}`))
	if b, err := os.ReadFile(filepath.Join(o.Roots[0], "other.txt")); err != nil || string(b) != "x\n" {
		t.Errorf("a plain file not written: %v (answer %q)", err, res.Text)
	}
}

// A cache folder that cannot be written falls back to a private one, and
// says so once.
func TestCacheFallsBack(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	o := Options{CacheDir: file}
	ch := o.Cache()
	if ch.Dir == file || ch.Wanted != file || ch.Why == "" {
		t.Fatalf("cache %+v", ch)
	}
	if o.Cache() != ch {
		t.Error("the cache is chosen again")
	}
	var b bytes.Buffer
	ch.Note(&b)
	ch.Note(&b)
	if n := strings.Count(b.String(), "cannot be written"); n != 1 {
		t.Errorf("noted %d times: %q", n, b.String())
	}
}

// --isolate require either isolates or refuses with NoIsolation (exit
// status 4), never runs without.
func TestRequireIsolation(t *testing.T) {
	o, _ := options(t)
	o.Limits.Isolate = "require"
	sb, err := Open(context.Background(), o)
	if err != nil {
		if kindOf(err) != NoIsolation {
			t.Errorf("require refused with %v (kind %d)", err, kindOf(err))
		}
		return
	}
	defer sb.Close()
	if res := sb.Engine.Call(context.Background(), "stat", []byte(`{"path":"notes.txt"}`)); res.IsError {
		t.Errorf("stat in the isolated child: %q", res.Text)
	}
}
