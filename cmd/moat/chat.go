package main

import (
	"context"
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Placeholder until this command is built.
func chatCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "chat", ShortUsage: "moat chat [flags]", ShortHelp: "talk with a model about the folder", FlagSet: flag.NewFlagSet("moat chat", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
