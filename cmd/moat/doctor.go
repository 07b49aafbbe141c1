package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/guest"
	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/runner"
	"github.com/moatdev/moat/isolate"
)

// Doctor line states. They are part of the output contract.
const (
	stOK      = "ok"      // the layer is active
	stOff     = "off"     // an optional layer is not active; the detail says why and how to enable it
	stFail    = "FAIL"    // a layer that must work does not: exit status 1
	stMissing = "missing" // Ollama or a model is not there; the sandbox does not need it, ask and chat do: exit status 1
)

// ollamaProbeTimeout bounds each request to the model server: the doctor
// must answer quickly even when nothing listens.
const ollamaProbeTimeout = 3 * time.Second

func doctorCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat doctor", flag.ContinueOnError)
	var c common
	c.register(fs)
	host := fs.String("host", "", "the model server, as URL or host:port (default: $OLLAMA_HOST, else "+agent.DefaultHost+")")
	validate(fs, "host", parsedBy(host, agent.ParseHost))
	api := fs.String("api", "ollama", "wire format of the model server, as for ask: ollama or openai")
	validate(fs, "api", oneOf(api, "ollama", "openai"))
	model := fs.String("model", "", "check this model: installed, tool support, context window (default: list the installed models that have tools, and check the first)")
	return &ffcli.Command{
		Name:       "doctor",
		ShortUsage: "moat doctor [flags]",
		ShortHelp:  "show which protection layers are active here",
		LongHelp: `Checks every protection layer on this machine by using it: compiles and
runs the guest, starts an isolated child that tries to escape, and asks the
model server what it has.

Output: one line per layer, "NAME  STATE  DETAIL", columns padded with
spaces, then a summary line. NAME is one of: guest runtime, resolver,
namespace user|mnt|net|pid|ipc|uts, no_new_privs, seccomp, capabilities,
keyring, landlock, sandbox view, escape probes, ollama (server, with --api
openai), model. STATE is one of:
  ok       the layer is active
  off      an optional layer is not active (DETAIL says why and what enables it)
  FAIL     a layer that must work does not
  missing  the model server or a model is not there (the sandbox works without)
The namespace, no_new_privs, seccomp, capabilities and keyring lines are
FAIL when they do not hold under --isolate require, and off under auto or
off. The summary names every sandbox layer that is off, and why.

Exit status: 0 when every check ask and chat need passed (the sandbox
layers hold, though an optional one may be off, and the model server
answers with a model that has tools), so that "moat doctor && moat ask ..."
runs ask only where it can work; 1 when a required layer is broken or the
model server or the model is missing (a missing line: moat tool and moat
mcp work without them); 2 usage.`,
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("doctor takes no arguments")
			}
			plan, err := c.opts(e).Resolve()
			if err != nil {
				return err
			}
			hc := &http.Client{Timeout: ollamaProbeTimeout}
			b, base, note, err := modelServer(*host, *api, isSet(fs, "api"), e.getenv, hc)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(e.stderr, note)
			}
			d := &doctor{out: e.stdout, cache: c.opts(e).Cache(), getenv: e.getenv}
			d.run(ctx, plan.Runner, plan.Mode, server{b: b, base: base.String(), hc: hc}, *model)
			switch {
			case d.failed > 0:
				return exitError{code: exitFailure, msg: fmt.Sprintf("%d required layer(s) broken; see the FAIL lines above", d.failed)}
			case d.missing:
				// ask and chat need the server and the model: a script's
				// "moat doctor && moat ask" must not go on to ask.
				return exitError{code: exitFailure, msg: "the model server or the model is missing (see the missing lines above): moat ask and chat cannot run here; moat tool and moat mcp can"}
			}
			return nil
		},
	}
}

// server is the model server doctor checks.
type server struct {
	b    agent.Backend
	base string
	hc   *http.Client
}

type doctor struct {
	getenv  func(string) string
	out     io.Writer
	cache   *assembly.Cache // the compile cache, and why it is not the one asked for
	failed  int
	missing bool
	off     []string // the sandbox layers that are off, each "name (why)", for the summary
}

// layerOff notes a sandbox layer that is off, and why, for the summary.
func (d *doctor) layerOff(name, why string) { d.off = append(d.off, name+" ("+why+")") }

func (d *doctor) line(name, state, format string, args ...any) {
	if state == stFail {
		d.failed++
	}
	if state == stMissing {
		d.missing = true
	}
	fmt.Fprintf(d.out, "%-16s %-7s %s\n", name, state, fmt.Sprintf(format, args...))
}

func (d *doctor) run(ctx context.Context, cfg runner.Config, mode isolate.Mode, srv server, model string) {
	d.roots(cfg)
	d.guest(ctx, cfg)
	d.isolation(ctx, cfg, mode)
	// The summary names the kind of server checked: Ollama for the native
	// API, and an OpenAI-compatible server as what it is.
	llm, llmMissing := "Ollama ok", "Ollama or model missing"
	if _, ok := srv.b.(*agent.Ollama); ok {
		d.ollama(ctx, srv, model)
	} else {
		llm, llmMissing = "model server ok (OpenAI API)", "model server (OpenAI API) or model missing"
		d.openAI(ctx, srv, model)
	}

	sandbox := "sandbox layers ok"
	switch {
	case d.failed > 0 && len(d.off) > 0:
		sandbox = "sandbox layers BROKEN; off: " + strings.Join(d.off, "; ")
	case d.failed > 0:
		sandbox = "sandbox layers BROKEN"
	case len(d.off) > 0:
		sandbox = "sandbox layers partly off: " + strings.Join(d.off, "; ")
	}
	if d.missing {
		llm = llmMissing + " (the sandbox does not need it; ask and chat do)"
	}
	fmt.Fprintf(d.out, "summary: %s; %s\n", sandbox, llm)
}

// roots lists the sandbox's roots, one a line: with several, each with
// the label its files are named under.
func (d *doctor) roots(cfg runner.Config) {
	dirs := cfg.Dirs()
	for _, r := range dirs {
		if len(dirs) == 1 {
			d.line("root", stOK, "%s", agent.Sanitize(r.Path, false))
			continue
		}
		d.line("root", stOK, "%s: %s (its files are named %s/...)", agent.Sanitize(r.Label, false), agent.Sanitize(r.Path, false), agent.Sanitize(r.Label, false))
	}
}

// guest compiles (or loads) the guest and runs one call through it.
func (d *doctor) guest(ctx context.Context, cfg runner.Config) {
	wz := "wazero " + runner.WazeroVersion()
	cache := "no compile cache"
	if cfg.CacheDir != "" {
		state := "cold: compiled now"
		if runner.CacheWarm(cfg.CacheDir) {
			state = "warm"
		}
		cache = fmt.Sprintf("compile cache %s (%s)", cfg.CacheDir, state)
	}
	if ch := d.cache; ch != nil && ch.Why != "" {
		if ch.Wanted != "" {
			cache += fmt.Sprintf(", as %s cannot be written (%s)", ch.Wanted, ch.Why)
		} else {
			cache += fmt.Sprintf(" (%s)", ch.Why)
		}
	}
	r, err := runner.New(ctx, cfg)
	if err != nil {
		d.line("guest runtime", stFail, "%s, guest %s: %v", wz, mb(len(guest.Wasm())), err)
		d.line("resolver", stFail, "not checked: the guest did not start")
		return
	}
	defer r.Close()
	resp, err := r.Exec(ctx, proto.Request{ID: 1, Tool: proto.Stat, Args: json.RawMessage(`{"path":"."}`)})
	switch {
	case err != nil:
		d.line("guest runtime", stFail, "%s, guest %s, %s: a stat call failed: %v", wz, mb(len(guest.Wasm())), cache, err)
	case resp.IsError:
		d.line("guest runtime", stFail, "%s, guest %s, %s: stat . answered %q", wz, mb(len(guest.Wasm())), cache, resp.Text)
	default:
		d.line("guest runtime", stOK, "%s, guest %s, %s", wz, mb(len(guest.Wasm())), cache)
	}
	switch got := r.Resolver(); {
	case got == confine.Openat2:
		d.line("resolver", stOK, "openat2 ("+confine.Openat2Flags+")")
	case got == confine.Root && cfg.Resolver == confine.Root:
		d.line("resolver", stOK, "os.Root (chosen with --resolver root)")
	case got == confine.Root:
		d.line("resolver", stOK, "os.Root (openat2 is unavailable here; a Linux 5.6+ kernel provides it)")
	default:
		d.line("resolver", stFail, "%s: not a confining resolver", got)
	}
}

// isolation starts a probing child and reports what it saw.
func (d *doctor) isolation(ctx context.Context, cfg runner.Config, mode isolate.Mode) {
	// Without isolation the child's layers are optional, except under require.
	absent := stOff
	if mode == isolate.Require {
		absent = stFail
	}
	why := ""
	if mode == isolate.Off {
		why = " (but --isolate off: moat will not use it)"
	}
	rep, err := isolate.Check(ctx, cfg)
	if err != nil {
		d.noChild(absent, strings.TrimPrefix(err.Error(), "isolate: "))
		return
	}
	if mode == isolate.Off {
		d.layerOff("OS isolation", "--isolate off: available here, not used")
	}
	l := childLayers{d: d, absent: absent, mode: mode, why: why}
	l.threads(rep)
	l.keyring(rep.Keyring)
	l.landlock(rep)
	l.view(rep)
}

// noChild reports every layer of the isolated child as absent: it cannot
// start here, for reason.
func (d *doctor) noChild(absent, reason string) {
	for _, n := range isolate.NamespaceNames {
		d.line("namespace "+n, absent, "unavailable: %s", reason)
	}
	for _, n := range []string{"no_new_privs", "seccomp", "capabilities", "keyring", "landlock", "sandbox view", "escape probes"} {
		d.line(n, absent, "needs the isolated child, which cannot start here")
	}
	if absent == stOff {
		d.layerOff("OS isolation", reason)
	}
}

// childLayers reports the layers of the isolated child, as it saw them.
type childLayers struct {
	d      *doctor
	absent string // the state of a layer that does not hold
	mode   isolate.Mode
	why    string // what --isolate off adds to a layer that holds
}

// layer prints one line of the child's: ok when it holds (off under
// --isolate off), else absent; an absent layer under auto goes into
// the summary with its detail.
func (l childLayers) layer(name string, ok bool, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	switch {
	case !ok:
		l.d.line(name, l.absent, "%s", detail)
		if l.absent == stOff && l.mode != isolate.Off {
			l.d.layerOff(name, detail)
		}
	case l.mode == isolate.Off:
		l.d.line(name, stOff, "%s%s", detail, l.why)
	default:
		l.d.line(name, stOK, "%s", detail)
	}
}

// threads reports the namespaces and what holds on every thread of the
// child: no_new_privs, seccomp, no capabilities.
func (l childLayers) threads(rep *isolate.Report) {
	for _, ns := range rep.Namespaces {
		switch {
		case ns.Err != "":
			l.layer("namespace "+ns.Name, false, "could not be compared: %s", ns.Err)
		case ns.Own:
			l.layer("namespace "+ns.Name, true, "the child has its own")
		default:
			l.layer("namespace "+ns.Name, false, "the child shares the host's")
		}
	}
	l.layer("no_new_privs", rep.Threads > 0 && rep.NoNewPrivs == rep.Threads, "set on %d of %d threads of the child", rep.NoNewPrivs, rep.Threads)
	l.layer("seccomp", rep.Threads > 0 && rep.Seccomp == rep.Threads, "filter on %d of %d threads: %s", rep.Seccomp, rep.Threads, rep.Filter)
	if rep.NoCaps == rep.Threads && rep.Threads > 0 {
		l.layer("capabilities", true, "none left on %d of %d threads (inheritable, permitted, effective, bounding, ambient)", rep.NoCaps, rep.Threads)
	} else {
		l.layer("capabilities", false, "held on %d of %d threads: %s", rep.Threads-rep.NoCaps, rep.Threads, rep.CapsSeen)
	}
}

// keyring reports the child's session keyring.
func (l childLayers) keyring(k string) {
	switch {
	case strings.HasPrefix(k, "fresh: "):
		l.layer("keyring", true, "%s; keyctl, add_key and request_key refused", k)
	case strings.HasPrefix(k, "not joined: "):
		// The host refuses keyrings to this process: the child has none
		// to reach either. Optional even under require.
		l.d.line("keyring", stOff, "%s", k)
		l.d.layerOff("keyring", k)
	default:
		l.layer("keyring", false, "%s", k)
	}
}

// landlock reports the child's Landlock rule set.
func (l childLayers) landlock(rep *isolate.Report) {
	abi, _ := isolate.LandlockABI()
	if !strings.HasPrefix(rep.Landlock, "applied") {
		// Optional even under require: the layers above already hold.
		l.d.line("landlock", stOff, "kernel ABI %d; %s", abi, rep.Landlock)
		l.d.layerOff("landlock", fmt.Sprintf("kernel ABI %d; %s", abi, rep.Landlock))
		return
	}
	// The child's own probe from many threads at once backs the claim.
	checked, ok := "", true
	for _, p := range rep.Probes {
		if strings.HasPrefix(p.Name, "landlock: ") {
			checked, ok = "; checked: "+p.Detail, p.Blocked
		}
	}
	l.layer("landlock", ok, "%s%s", rep.Landlock, checked)
}

// view reports the child's / and its escape probes.
func (l childLayers) view(rep *isolate.Report) {
	l.layer("sandbox view", strings.Join(rep.Root, ",") == "sandbox", "/ holds only: %s", strings.Join(rep.Root, " "))
	var open []string
	for _, p := range rep.Probes {
		if !p.Blocked {
			open = append(open, p.Name+" ("+p.Detail+")")
		}
	}
	if len(open) > 0 {
		l.layer("escape probes", false, "%d of %d got through: %s", len(open), len(rep.Probes), strings.Join(open, "; "))
	} else {
		l.layer("escape probes", true, "%d of %d blocked (host /etc /home /proc, 127.0.0.1 connect, host pids, writes, remount, keyrings, calls outside the seccomp allow-list, a listing from many threads)", len(rep.Probes), len(rep.Probes))
	}
}

// ollama checks the Ollama server, the model's tool support and the
// context window ask and chat would use with it.
func (d *doctor) ollama(ctx context.Context, srv server, model string) {
	host := srv.base
	vctx, cancel := context.WithTimeout(ctx, ollamaProbeTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(vctx, http.MethodGet, strings.TrimSuffix(host, "/")+"/api/version", nil)
	resp, err := srv.hc.Do(req)
	if err != nil {
		d.line("ollama", stMissing, "not reachable at %s (%v); start it with: ollama serve", host, unwrapURLError(err))
		d.line("model", stMissing, "not checked: no server")
		return
	}
	var v struct{ Version string }
	json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&v)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		d.line("ollama", stMissing, "%s answered %s to /api/version: is it Ollama? (an OpenAI-compatible server: --api openai)", host, resp.Status)
	} else {
		d.line("ollama", stOK, "Ollama %s at %s", agent.Sanitize(v.Version, false), host)
	}
	mctx, cancel2 := context.WithTimeout(ctx, 2*ollamaProbeTimeout)
	defer cancel2()
	d.model(mctx, srv.b, model, "ollama pull qwen3")
}

// openAI checks an OpenAI-compatible server: that it answers and lists
// the model. Such a server says nothing of tool support or context size.
func (d *doctor) openAI(ctx context.Context, srv server, model string) {
	mctx, cancel := context.WithTimeout(ctx, 2*ollamaProbeTimeout)
	defer cancel()
	if _, err := srv.b.ToolModels(mctx); err != nil && (errors.Is(err, agent.ErrUnreachable) || errors.Is(err, agent.ErrHTTP) || errors.Is(err, context.DeadlineExceeded)) {
		d.line("server", stMissing, "%v", err)
		d.line("model", stMissing, "not checked: no server")
		return
	}
	d.line("server", stOK, "%s answers /v1/models", srv.b)
	d.model(mctx, srv.b, model, "load one in the server")
}

// model checks the named model, or lists those with tool support and
// checks the first (the one ask would pick), and reports its context
// window as ask and chat would choose it.
func (d *doctor) model(ctx context.Context, b agent.Backend, model, install string) {
	what := ""
	if model != "" {
		if err := b.CheckModel(ctx, model); err != nil {
			d.line("model", stMissing, "%s: %v", agent.Sanitize(model, false), err)
			return
		}
		// The OpenAI-compatible API cannot be asked about one model, so
		// CheckModel lets ask try any name (some servers load a model on
		// request); the doctor says whether the server lists it.
		if _, ok := b.(*agent.OpenAI); ok {
			if ms, err := b.ToolModels(ctx); err == nil && !slices.Contains(ms, model) && !slices.Contains(ms, model+":latest") { // Ollama lists "qwen3:latest" and serves "qwen3"
				listed := nameListOf(ms[:min(len(ms), 5)])
				if len(ms) > 5 {
					listed += fmt.Sprintf(" and %d more", len(ms)-5)
				}
				d.line("model", stMissing, "%s is not among the models the server lists (%s); load it there, or pick one of those with --model (a server that loads models on request may still serve it)",
					agent.Sanitize(model, false), listed)
				return
			}
		}
		what = agent.Sanitize(model, false) + " is installed"
		if _, ok := b.(*agent.Ollama); ok {
			what += " and supports tools"
		}
	} else {
		ms, err := b.ToolModels(ctx)
		switch {
		case err != nil && errors.Is(err, agent.ErrNoModel):
			d.line("model", stMissing, "%v", err)
			return
		case err != nil:
			d.line("model", stMissing, "could not list models: %v", err)
			return
		case len(ms) == 0:
			d.line("model", stMissing, "none installed; %s", install)
			return
		}
		model = ms[0]
		what = "with tool support: " + nameListOf(ms) + " (choose with --model or MOAT_MODEL)"
	}
	w, known, err := windowOf(ctx, b, model)
	if err != nil {
		d.line("model", stOK, "%s; context window not known: %v", what, err)
		return
	}
	n, why := contextWindow(w, known, d.getenv)
	detail := fmt.Sprintf("%s; context window %d tokens (%s", what, n, why)
	if w.Trained > 0 {
		detail += fmt.Sprintf("; trained for %d", w.Trained)
	}
	if model != "" && !strings.Contains(what, " is installed") {
		detail += "; for " + agent.Sanitize(model, false)
	}
	d.line("model", stOK, "%s)", detail)
}

func nameListOf(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = agent.Sanitize(n, false)
	}
	return strings.Join(out, ", ")
}

// unwrapURLError drops net/http's "Get URL:" prefix; the line names the URL.
func unwrapURLError(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || !strings.HasPrefix(err.Error(), "Get ") {
			return err
		}
		err = u.Unwrap()
	}
}

func mb(n int) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
