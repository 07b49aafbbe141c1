package main

import (
	"context"
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Placeholder until this command is built.
func doctorCommand(e *env) *ffcli.Command {
	return &ffcli.Command{Name: "doctor", ShortUsage: "moat doctor [flags]", ShortHelp: "show which protection layers are active here", FlagSet: flag.NewFlagSet("moat doctor", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error { return usagef("not yet") }}
}
