package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/mcpserver"
	"github.com/moatdev/moat/host/recording"
	"github.com/moatdev/moat/host/runner"
)

// mcpFlags are moat mcp's flags.
type mcpFlags struct {
	c              common
	w              writeFlags
	rec            recordFlags
	h              httpFlags
	approveTimeout time.Duration
	logFile        string
}

func mcpCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat mcp", flag.ContinueOnError)
	m := &mcpFlags{}
	m.c.register(fs)
	m.w.register(fs, askInClient)
	fs.DurationVar(&m.approveTimeout, "approve-timeout", mcpserver.DefaultApproveTimeout, "how long a write proposal waits for the user's answer before it is refused")
	validate(fs, "approve-timeout", positive(&m.approveTimeout))
	fs.StringVar(&m.logFile, "log", "", "append the server's log to this `file` instead of standard error (never standard output: that is the protocol)")
	m.rec.register(fs)
	m.h.register(fs)
	return &ffcli.Command{
		Name:       "mcp",
		ShortUsage: "moat mcp [--root DIR... | DIR...] [--listen ADDR --token-file FILE] [flags]",
		ShortHelp:  "serve the sandboxed tools over MCP (stdio, or Streamable HTTP)",
		LongHelp:   mcpLongHelp,
		FlagSet:    fs,
		Exec:       func(ctx context.Context, args []string) error { return m.run(ctx, e, args) },
	}
}

// mcpLongHelp is moat help mcp.
const mcpLongHelp = `Serves moat's tools to an MCP client (desktop chat apps, IDE assistants,
agent frameworks) over standard input and output, newline-delimited
JSON-RPC. The tools, their JSON Schemas and their error texts are exactly
those of 'moat tool' and 'moat ask': the same validation, deny-list, path
resolver, limits and isolation, with one sandbox for the server's life.
Read-only tools are annotated readOnlyHint, idempotentHint and not
openWorldHint; a refused call is an isError result saying why.

The root is --root, or the folder given as an argument (moat mcp
~/src/project), and nothing else. Several folders (--root a --root b, or
moat mcp a b, as the reference filesystem server takes them) are several
roots, each named by its base name: every path starts with it, and
list_dir "." lists them. A client may announce "roots" of its own; moat
ignores them. The root is the boundary chosen by the person who
configured the server, while the client acts for a model that reads
untrusted files: a client may narrow what it asks for, never widen what
moat serves. To give a client less, configure a narrower --root.

Writes: propose_write and propose_edit are listed only to clients that
support elicitation (form mode). Each proposal goes through the same
approval gate as the terminal (same checks, same apply rules, same
--audit log) and is shown to the user in the client as a dialog with the
path, sizes and unified diff; it is written only if the user ticks approve
and accepts. Decline, cancel, an error or --approve-timeout: nothing is
written. Other clients never see the two tools.

Besides the read-only tools, MCP clients get read_files: up to 16 files
in one call, each read as read_file reads it (one that cannot be read is
reported in its place), with its answer also as structuredContent. A call
of a tool moat does not have (another server's read_text_file, say) is
told moat's nearest tool and the list.

The server stops cleanly when the client closes standard input, and on
SIGINT or SIGTERM. Logs go to standard error or --log FILE, never to
standard output.

Streamable HTTP: --listen ADDR serves the same tools at
http://ADDR/mcp instead of stdio, to web front ends (Open WebUI) and
other HTTP clients, several sessions at once. ADDR is HOST:PORT, :PORT
or PORT; without a host it binds 127.0.0.1, so only a host named
explicitly (0.0.0.0:8080) is reachable from other machines. Port 0
picks a free port; the address is printed on standard error as
"listening on http://HOST:PORT/mcp". Every request needs the header
Authorization: Bearer TOKEN, TOKEN being the content of --token-file
FILE, which is created with a new random token (mode 0600) if it does
not exist; without it the answer is 401. A request from a web page that
is not on this machine (an Origin header other than localhost,
127.0.0.1 or [::1]) gets 403, and a Host header other than a loopback
one on a loopback listener too (DNS rebinding). A body over 16 MiB gets
413, a session beyond the 32 open at once 503, and a call beyond the 16
running and 1,024 waiting an error saying moat is busy. Idle sessions
close after 30 minutes. Writes ask through the client's elicitation
dialog exactly as over stdio. It runs until SIGINT or SIGTERM.
  moat mcp --root ~/src/project --listen :8080 --token-file ~/.config/moat/token
Open WebUI (Admin Settings, External Tools, +, type MCP (Streamable
HTTP)): URL http://localhost:8080/mcp, auth Bearer with the token from
the file (in Docker, see docs/mcp.md: "Over HTTP").

Client configuration (Claude Desktop's claude_desktop_config.json; Cursor
and most other clients use the same "mcpServers" shape):
  {"mcpServers": {"moat": {"command": "moat",
    "args": ["mcp", "--root", "/home/me/src/project"]}}}

Exit status: 0 after a clean end, 1 if serving failed, 2 for a usage
error, 4 when --isolate require cannot isolate.`

// run serves until the client or a signal ends it.
func (m *mcpFlags) run(ctx context.Context, e *env, args []string) error {
	c, w := &m.c, &m.w
	if err := rootArgument(c, args, e); err != nil {
		return err
	}
	if err := m.h.check(&m.rec); err != nil {
		return err
	}
	if _, err := c.opts(e).Resolve(); err != nil {
		return err // on stderr, before --log takes over
	}
	logw := e.stderr
	if m.logFile != "" {
		f, err := os.OpenFile(m.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fileError(e.source("log"), m.logFile, err)
		}
		defer f.Close()
		logw = f
	}
	log := slog.New(slog.NewTextHandler(logw, nil))
	if isTerminal(e.stdin) && m.h.listen == "" {
		// Someone typed moat mcp to try it: say what it is.
		fmt.Fprintln(e.stderr, "moat mcp: this is an MCP server; it speaks JSON-RPC on standard input and output to an MCP client, which starts it (a client configuration is in 'moat help mcp'). Ctrl-C stops it.")
	}
	if err := m.rec.check(); err != nil {
		return err
	}
	o := *c.opts(e)
	o.Notes = logw
	o.Writes = w.options(e, assembly.Client)
	o.Writes.ApproveTimeout = m.approveTimeout
	if err := o.Writes.CheckAudit(); err != nil {
		return err // refused with --writes deny too, as ask, chat and tool refuse it
	}
	o.Record = m.rec.record(recording.SessionInfo{Command: "mcp"}, func(writes string) string { return "--writes " + writes })
	if o.Record != nil {
		o.Record.Notes = e.stderr
	}
	sb, err := assembly.Open(ctx, o)
	if err != nil {
		return err
	}
	defer sb.Close()
	return m.serve(ctx, e, sb, log)
}

// serve serves the sandbox's engine over stdio, or over HTTP with --listen.
func (m *mcpFlags) serve(ctx context.Context, e *env, sb *assembly.Sandbox, log *slog.Logger) error {
	c := &m.c
	log.Info("moat mcp: serving", "root", servedRoots(sb), "writes", sb.Writes, "resolver", c.lim.Resolver, "isolate", c.lim.Isolate,
		"version", moatVersion(), "go", runtime.Version(), "wazero", runner.WazeroVersion())
	var served mcpserver.Engine = sb.Engine
	if sb.Recorder != nil {
		served = sb.Recorder.MCP(sb.Engine)
	}
	srv := mcpserver.New(served, mcpserver.Options{Name: "moat", Version: moatVersion(), Logger: log, Root: sb.Root, Roots: labels(sb)})
	var err error
	if m.h.listen != "" {
		err = m.h.serve(ctx, e, c, srv, log)
	} else {
		err = srv.Serve(ctx, &mcp.IOTransport{Reader: readCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	}
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	log.Info("moat mcp: stopped")
	return nil
}

// labels are the roots' labels with several roots, else nil.
func labels(sb *assembly.Sandbox) []string {
	if len(sb.Roots) < 2 {
		return nil
	}
	var out []string
	for _, d := range sb.Roots {
		out = append(out, d.Label)
	}
	return out
}

// servedRoots is the log's root: the one root's path, or each root as
// LABEL=PATH.
func servedRoots(sb *assembly.Sandbox) string {
	if len(sb.Roots) < 2 {
		return sb.Root
	}
	var out []string
	for _, d := range sb.Roots {
		out = append(out, d.Label+"="+d.Path)
	}
	return strings.Join(out, " ")
}

// rootArgument takes moat mcp's folder arguments as its roots.
func rootArgument(c *common, args []string, e *env) error {
	switch {
	case len(args) == 0:
		return nil
	case len(c.roots) > 0:
		return usagef("mcp got the folder %q as an argument and %s %q: give the root once", args[0], e.source("root"), c.roots[0])
	}
	for _, a := range args {
		if err := assembly.CheckRoot(a); err != nil {
			if len(args) == 1 {
				return usagef("mcp takes one argument, the folder to serve (as --root does): %v", err)
			}
			return usagef("mcp takes folders as arguments, the roots to serve (as --root does): %v", err)
		}
	}
	roots, err := addRoots(nil, args)
	if err != nil {
		return usagef("mcp: %v", err)
	}
	c.roots = roots
	return nil
}

// addRoots adds each of args to roots.
func addRoots(roots, args []string) ([]string, error) {
	for _, arg := range args {
		var err error
		if roots, err = assembly.AddRoot(roots, arg); err != nil {
			return roots, err
		}
	}
	return roots, nil
}

// readCloser lets the transport close standard input when it stops, which
// unblocks a pending read where the system allows it.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// nopWriteCloser keeps standard output open after the transport is done
// with it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
