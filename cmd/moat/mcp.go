package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/mcpserver"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/recording"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/runner"
)

func mcpCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat mcp", flag.ContinueOnError)
	var c common
	var w writeFlags
	c.register(fs)
	w.register(fs, askInClient)
	approveTimeout := fs.Duration("approve-timeout", mcpserver.DefaultApproveTimeout, "how long a write proposal waits for the user's answer before it is refused")
	validate(fs, "approve-timeout", positive(approveTimeout))
	logFile := fs.String("log", "", "append the server's log to this `file` instead of standard error (never standard output: that is the protocol)")
	var rec recordFlags
	rec.register(fs)
	return &ffcli.Command{
		Name:       "mcp",
		ShortUsage: "moat mcp [--root DIR] [flags]",
		ShortHelp:  "serve the sandboxed tools over MCP (stdio)",
		LongHelp: `Serves moat's tools to an MCP client (desktop chat apps, IDE assistants,
agent frameworks) over standard input and output, newline-delimited
JSON-RPC. The tools, their JSON Schemas and their error texts are exactly
those of 'moat tool' and 'moat ask': the same validation, deny-list, path
resolver, limits and isolation, with one sandbox for the server's life.
Read-only tools are annotated readOnlyHint, idempotentHint and not
openWorldHint; a refused call is an isError result saying why.

The root is --root and nothing else. A client may announce "roots" of its
own; moat ignores them. The root is the boundary chosen by the person who
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

The server stops cleanly when the client closes standard input, and on
SIGINT or SIGTERM. Logs go to standard error or --log FILE, never to
standard output.

Client configuration (Claude Desktop's claude_desktop_config.json; Cursor
and most other clients use the same "mcpServers" shape):
  {"mcpServers": {"moat": {"command": "moat",
    "args": ["mcp", "--root", "/home/me/src/project"]}}}

Exit status: 0 after a clean end, 1 if serving failed, 2 for a usage
error, 4 when --isolate require cannot isolate.`,
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 0 {
				return usagef("mcp takes no arguments (the root is --root); see 'moat help mcp'")
			}
			if _, _, err := c.sandbox(); err != nil {
				return err // on stderr, before --log takes over
			}
			logw := e.stderr
			if *logFile != "" {
				f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
				if err != nil {
					return fileError(e.source("log"), *logFile, err)
				}
				defer f.Close()
				logw = f
			}
			log := slog.New(slog.NewTextHandler(logw, nil))
			if isTerminal(e.stdin) {
				// Someone typed moat mcp to try it: say what it is.
				fmt.Fprintln(e.stderr, "moat mcp: this is an MCP server; it speaks JSON-RPC on standard input and output to an MCP client, which starts it (a client configuration is in 'moat help mcp'). Ctrl-C stops it.")
			}
			if err := rec.check(); err != nil {
				return err
			}
			if err := w.checkAuditFrom(e.source("audit")); err != nil {
				return err // refused with --writes deny too, as ask, chat and tool refuse it
			}
			recorder, err := rec.start(e, &c, recording.Session{Command: "mcp", Writes: w.writes}, "--writes "+w.writes)
			if err != nil {
				return err
			}
			if recorder != nil {
				defer recorder.close()
			}

			mk := func(abs string, pol *policy.Policy, red *redact.Redactor) (engine.Proposer, error) {
				if !w.offered() {
					return nil, nil
				}
				if err := w.checkAudit(); err != nil {
					return nil, err
				}
				a, err := mcpserver.NewApprover(*approveTimeout, func(r gate.Reviewer) (engine.Proposer, error) {
					// The reviewer is the client's elicitation dialog, not the terminal.
					if recorder != nil {
						r = recorder.reviewer(r)
					}
					return gate.New(gate.Options{Root: abs, Policy: pol, AuditPath: w.audit, Notes: logw, Reviewer: r, Redactor: red})
				})
				if err != nil {
					return nil, err
				}
				return a, nil
			}
			eng, err := c.openEngineWith(ctx, logw, mk)
			if err != nil {
				return err
			}
			defer eng.Close()

			abs, _ := filepath.Abs(c.root)
			log.Info("moat mcp: serving", "root", abs, "writes", w.writes, "resolver", c.resolver, "isolate", c.isolate,
				"version", moatVersion(), "go", runtime.Version(), "wazero", runner.WazeroVersion())
			var served mcpserver.Engine = eng
			if recorder != nil {
				served = recorder.mcp(eng)
			}
			srv := mcpserver.New(served, mcpserver.Options{Name: "moat", Version: moatVersion(), Logger: log, Root: abs})
			err = srv.Serve(ctx, &mcp.IOTransport{Reader: readCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
			if err != nil {
				return fmt.Errorf("mcp: %w", err)
			}
			log.Info("moat mcp: stopped")
			return nil
		},
	}
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
