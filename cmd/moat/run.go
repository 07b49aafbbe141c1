package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Exit statuses. They are a contract for scripts.
const (
	exitOK       = 0
	exitFailure  = 1 // the tool returned an error, or moat could not do its job
	exitUsage    = 2 // bad flags or arguments
	exitTurnCap  = 3 // ask/chat: the model hit --max-turns without answering
	exitNoIsolat = 4 // --isolate require and isolation cannot start
)

// usageError marks errors that are the caller's fault; they exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError carries a specific exit status with an optional message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// env bundles what a command needs from the outside world, so commands are
// testable and there is no package-level state.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, ok := maybeChild(ctx, args); ok {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}

	rootFS := flag.NewFlagSet("moat", flag.ContinueOnError)
	rootFS.SetOutput(stderr)
	version := rootFS.Bool("version", false, "print the version and exit")
	root := &ffcli.Command{
		Name:       "moat",
		ShortUsage: "moat <command> [flags] [args]",
		ShortHelp:  "let a local LLM explore a folder safely",
		LongHelp:   rootHelp,
		FlagSet:    rootFS,
		Subcommands: []*ffcli.Command{
			askCommand(e), chatCommand(e), toolCommand(e), mcpCommand(e), doctorCommand(e),
		},
		Exec: func(ctx context.Context, args []string) error {
			if *version {
				fmt.Fprintln(stdout, versionString())
				return nil
			}
			if len(args) > 0 && args[0] != "help" {
				return usagef("unknown command %q; run 'moat help' for the list", args[0])
			}
			return flag.ErrHelp
		},
	}
	root.Subcommands = append(root.Subcommands, helpCommand(e, root))
	for _, c := range append([]*ffcli.Command{root}, root.Subcommands...) {
		c.UsageFunc = usageFunc
		if c.FlagSet != nil {
			c.FlagSet.SetOutput(stderr)
		}
	}
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		var ue usageError
		if !errors.As(err, &ue) {
			// The flag package has printed the problem and the usage already.
			return exitUsage
		}
		return exitCode(err, stderr)
	}
	return exitCode(root.Run(ctx), stderr)
}

func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "moat:", ue.msg)
		return exitUsage
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(stderr, "moat:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "moat:", err)
	return exitFailure
}

func versionString() string {
	v := "(devel)"
	wz := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				wz = ", wazero " + d.Version
			}
		}
		return fmt.Sprintf("moat %s (%s%s)", v, bi.GoVersion, wz)
	}
	return "moat " + v
}

const rootHelp = `moat runs a local model (through Ollama or any OpenAI-compatible server)
against one folder, the sandbox root. The model gets read-only tools
(list_dir, read_file, grep, glob, stat) and may propose writes that only you
can approve at the terminal.

The tools run as a WebAssembly program inside wazero, on a filesystem that
cannot leave the root (os.Root / openat2 RESOLVE_BENEATH), and on Linux
inside user, mount and network namespaces. Secrets (.env, keys, .git/) are
denied by name.

Start here:
  ollama serve & ollama pull qwen3      # any model with tool support
  moat ask --root ~/src/project "What does this project do?"
  moat chat --root ~/src/project        # interactive
  moat tool --root . grep '{"pattern":"TODO"}'   # one call, as a model makes it
  moat doctor                           # which protection layers are active

Every flag can also come from a MOAT_* environment variable (--max-turns is
MOAT_MAX_TURNS) or from a config file given with --config (one "flag value"
per line). Run 'moat help COMMAND' for a command's flags.`
