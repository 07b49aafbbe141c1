package main

import (
	"context"
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Placeholder until this command is built.
func askCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "ask", ShortUsage: "moat ask [flags] PROMPT", ShortHelp: "ask one question about the folder", FlagSet: flag.NewFlagSet("moat ask", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
