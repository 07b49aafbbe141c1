package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/guest"
	"github.com/moatdev/moat/host/runner"
)

func versionCommand(e *env) *ffcli.Command {
	return &ffcli.Command{
		Name:       "version",
		ShortUsage: "moat version",
		ShortHelp:  "print moat's version, and those of Go, wazero and the guest",
		LongHelp: `Prints moat's version (the module version it was built as, or "devel"
for a build from a clone), the Go release and platform it was built with,
the wazero release that runs the guest, and the guest's Go build ID, which
names the exact tools.wasm inside. It takes no flags and no arguments;
'moat --version' (a flag of moat itself) prints the same.`,
		FlagSet: flag.NewFlagSet("moat version", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			fmt.Fprintln(e.stdout, versionText())
			return nil
		},
	}
}

// versionText is what 'moat version' prints: the first line for people and
// bug reports, the second naming the embedded guest exactly.
func versionText() string {
	s := fmt.Sprintf("moat %s (%s %s/%s, wazero %s)", moatVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, runner.WazeroVersion())
	if id := guest.BuildID(); id != "" {
		s += "\nguest build ID " + id
	}
	return s
}

// moatVersion is the module version moat was built as (go install
// github.com/moatdev/moat/cmd/moat@v1.2.3 records it), or "devel" for a
// build from a clone.
func moatVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
