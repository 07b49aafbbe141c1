package main

import (
	"context"
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// TODO(lead): replaced by ask.go, chat.go, mcp.go and doctor.go.

func askCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "ask", ShortUsage: "moat ask [flags] PROMPT", ShortHelp: "ask one question about the folder", FlagSet: flag.NewFlagSet("moat ask", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
func chatCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "chat", ShortUsage: "moat chat [flags]", ShortHelp: "talk with a model about the folder", FlagSet: flag.NewFlagSet("moat chat", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
func mcpCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "mcp", ShortUsage: "moat mcp [flags]", ShortHelp: "serve the sandboxed tools over MCP (stdio)", FlagSet: flag.NewFlagSet("moat mcp", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
func doctorCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "doctor", ShortUsage: "moat doctor [flags]", ShortHelp: "show which protection layers are active here", FlagSet: flag.NewFlagSet("moat doctor", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
