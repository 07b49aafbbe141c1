package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/guest"
)

func versionCommand(e *env) *ffcli.Command {
	return &ffcli.Command{
		Name:       "version",
		ShortUsage: "moat version",
		ShortHelp:  "print moat's version, and those of Go, wazero and the guest",
		LongHelp: `Prints moat's version (the module version it was built as, or "devel"
for a build from a clone), the Go release and platform it was built with,
the wazero release that runs the guest, and the guest's Go build ID, which
names the exact tools.wasm inside. 'moat --version' prints the same.`,
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
	s := fmt.Sprintf("moat %s (%s %s/%s, wazero %s)", moatVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, wazeroVersion())
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

// wazeroVersion is the version of the wazero linked in, from the build
// information ("unknown" when the binary carries none).
//
// host/runner reads the same for its cache key; when it exports that
// function, this one should go and its callers use runner's.
func wazeroVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				if d.Replace != nil {
					d = d.Replace
				}
				return d.Version
			}
		}
	}
	return "unknown"
}
