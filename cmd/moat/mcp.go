package main

import (
	"context"
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Placeholder until this command is built.
func mcpCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "mcp", ShortUsage: "moat mcp [flags]", ShortHelp: "serve the sandboxed tools over MCP (stdio)", FlagSet: flag.NewFlagSet("moat mcp", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
