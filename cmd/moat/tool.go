package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/toolspec"
)

func toolCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat tool", flag.ContinueOnError)
	var c common
	var w writeFlags
	c.register(fs)
	w.register(fs, askAtTerminal)
	return &ffcli.Command{
		Name:       "tool",
		ShortUsage: "moat tool [flags] NAME [ARGS_JSON | -]",
		ShortHelp:  "run one tool call exactly as a model would make it",
		LongHelp: `Runs one tool call through the same validation and sandbox a model's call
goes through, and prints exactly the text the model would receive.

ARGS_JSON is the call's arguments as a JSON object (default {}); "-" reads
it from standard input.

Exit status: 0 when the tool succeeded, 1 when it returned an error (the
error text, as the model sees it, is still on stdout) or a file or folder
a flag names is missing or unusable, 2 for a usage
error (also a tool name that does not exist, or ARGS_JSON that is not
JSON), 4 when --isolate require and isolation cannot start here, 130 when
interrupted (Ctrl-C).

Tools ("?" marks an optional argument):
` + toolspec.Help() + `
Examples:
  moat tool list_dir '{"path":"."}'
  moat tool read_file '{"path":"README.md","offset":40,"limit":20}'
  moat tool --root ~/src/app stat '{"path":"go.mod"}'
  moat tool grep '{"pattern":"func main","glob":"**/*.go"}'
  echo '{"path":"go.mod"}' | moat tool --root ~/src/app stat -`,
		FlagSet: fs,
		Exec:    func(ctx context.Context, args []string) error { return runTool(ctx, e, &c, &w, args) },
	}
}

// runTool runs the one call the arguments name and prints its answer.
func runTool(ctx context.Context, e *env, c *common, w *writeFlags, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return usagef("tool needs NAME and optionally ARGS_JSON; see 'moat help tool'")
	}
	name, raw := args[0], "{}"
	if len(args) == 2 {
		raw = args[1]
	}
	if raw == "-" {
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return fmt.Errorf("reading arguments from stdin: %w", err)
		}
		raw = string(b)
	}
	// The person typed the call: a review names them, not a model.
	o := *c.opts(e)
	o.Writes = w.options(e, assembly.TypedAtTerminal)
	// An --audit path that cannot be one is refused whatever
	// the call, as ask and chat refuse it.
	if err := o.Writes.CheckAudit(); err != nil {
		return err
	}
	sb, err := assembly.Open(ctx, o)
	if err != nil {
		return err
	}
	defer sb.Close()
	eng := sb.Engine
	if t, ok := eng.Catalog().Lookup(name); ok && !t.Write {
		o.Writes.AuditUnused(e.stderr, name+" proposes no write")
	} else if ok && !o.Writes.Offer {
		o.Writes.AuditUnused(e.stderr, "--writes deny refuses the proposal before anyone sees it")
	}
	res := eng.Call(ctx, name, []byte(raw))
	io.WriteString(e.stdout, res.Text)
	if !strings.HasSuffix(res.Text, "\n") && res.Text != "" {
		io.WriteString(e.stdout, "\n")
	}
	if res.IsError {
		// A name that is no tool's, or arguments that are not JSON,
		// are the caller's mistake (a model's would be its own).
		if !slices.Contains(proto.Tools(), name) || !json.Valid([]byte(raw)) {
			return exitError{code: exitUsage}
		}
		return exitError{code: exitFailure}
	}
	return nil
}
