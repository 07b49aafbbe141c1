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
	"strings"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/assembly"
)

// Exit statuses. They are a contract for scripts, one rule for every
// command (README's table lists them): usage (2) is a command line that is
// wrong whatever the machine holds (an unknown flag, a value that does not
// parse, a missing argument, flags that contradict each other); failure (1)
// is a world that is not as the command line asked (a file or folder that
// is missing or cannot be used, no saved session, no model server or
// model, a tool's error, a difference in a replay).
const (
	exitOK       = 0
	exitFailure  = 1 // the world is not as asked: a missing file, no session, no server, a tool error
	exitUsage    = 2 // the command line is wrong: bad flags or arguments
	exitTurnCap  = 3 // ask/chat: the model hit --max-turns without answering
	exitNoIsolat = 4 // --isolate require and isolation cannot start
	exitCutOff   = 5 // ask/chat: the server cut a reply off at its length limit
	// exitInterrupt is a command stopped by Ctrl-C (SIGINT) or SIGTERM,
	// 128 + SIGINT's number as shells report it. chat, whose Ctrl-C stops
	// a reply, and mcp, for which a signal is the normal end, end 0.
	exitInterrupt = 130
)

// usageError marks errors that are the caller's fault; they exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// failf is an error of the world, not of the command line (exit 1): a file
// that is missing, a session that is not saved.
func failf(format string, args ...any) error {
	return exitError{code: exitFailure, msg: fmt.Sprintf(format, args...)}
}

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
	environ        func() []string   // every variable, "KEY=value"; nil: none
	sources        map[string]string // flag name -> the variable it came from
}

// source names where a flag's value came from, for an error about it:
// "MOAT_LOG" when the variable set it, else "--log".
func (e *env) source(flagName string) string {
	if s := e.sources[flagName]; s != "" {
		return s
	}
	return "--" + flagName
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	if code, ok := maybeChild(ctx, args); ok {
		return code
	}
	defer func() {
		if p := recover(); p != nil {
			code = crashed(p, debug.Stack(), stderr)
		}
	}()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, environ: os.Environ, sources: map[string]string{}}
	return interrupted(ctx, exitCode(dispatch(ctx, e, rootCommand(e), args), stderr))
}

// interrupted turns the failure of a command cut short by a signal (ctx
// ended) into exitInterrupt.
func interrupted(ctx context.Context, code int) int {
	if code == exitFailure && ctx.Err() != nil {
		return exitInterrupt
	}
	return code
}

// rootCommand is the command tree. ffcli's Command describes each command
// (name, help, flags, what it runs); dispatch does the parsing, because
// moat takes flags anywhere and words every mistake itself.
func rootCommand(e *env) *ffcli.Command {
	root := &ffcli.Command{
		Name:       "moat",
		ShortUsage: "moat COMMAND [flags] [args]",
		ShortHelp:  "let a local LLM explore a folder safely",
		LongHelp:   rootHelp,
		FlagSet:    flag.NewFlagSet("moat", flag.ContinueOnError),
		Subcommands: []*ffcli.Command{
			askCommand(e), chatCommand(e), sessionsCommand(e), toolCommand(e), mcpCommand(e), replayCommand(e), doctorCommand(e), versionCommand(e),
		},
	}
	root.FlagSet.Bool("version", false, "print the version and exit (as 'moat version')")
	root.Subcommands = append(root.Subcommands, completionCommand(e, root), helpCommand(e, root))
	return root
}

// dispatch runs the command args name, with its flags set from args, the
// environment and the config file.
func dispatch(ctx context.Context, e *env, root *ffcli.Command, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stdout, helpText(root, helpWidth(e)))
		return nil
	}
	owners := ownersOf(root.Subcommands)
	switch a := args[0]; {
	case a == "-h" || a == "-help" || a == "--help":
		fmt.Fprintln(e.stdout, helpText(root, helpWidth(e)))
		return nil
	case a == "-version" || a == "--version":
		fmt.Fprintln(e.stdout, versionText())
		return nil
	case strings.HasPrefix(a, "-"):
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if len(owners[name]) > 0 {
			return usagef("--%s goes after the command's name, as in: moat %s --%s ...\nRun 'moat help' for the commands.", name, owners[name][0], name)
		}
		if len([]rune(name)) == 1 {
			return usagef("unknown flag %s (moat has no one-letter flags%s)\nRun 'moat help' for the commands.", a, guessLong(root.FlagSet, name))
		}
		return usagef("unknown flag --%s%s\nRun 'moat help' for the commands.", name, closest(name, []string{"version", "help"}))
	}
	var c *ffcli.Command
	for _, s := range root.Subcommands {
		if s.Name == args[0] {
			c = s
		}
	}
	if c == nil {
		return usagef("unknown command %q%s; run 'moat help' for the list", args[0], suggestCommand(args[0], root.Subcommands))
	}
	if e.sources == nil {
		e.sources = map[string]string{}
	}
	warnUnknownVars(e, owners)
	pos, err := parseFlags(c, args[1:], e.getenv, owners, e.sources)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(e.stdout, commandHelp(e, c))
		return nil
	}
	if err != nil {
		return err
	}
	return c.Exec(ctx, pos)
}

// crashed reports a bug in moat in one line instead of a Go stack trace,
// which goes to a file for the bug report.
func crashed(p any, stack []byte, stderr io.Writer) int {
	where := "it could not be saved"
	if f, err := os.CreateTemp("", "moat-crash-*.txt"); err == nil {
		fmt.Fprintf(f, "moat %s: panic: %v\n\n%s", moatVersion(), p, stack)
		f.Close()
		where = "the details are in " + f.Name()
	}
	fmt.Fprintf(stderr, "moat: internal error (a bug in moat: %v); %s, please report it\n", p, where)
	return exitFailure
}

func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var ee exitError
	var ae *assembly.Error
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ae):
		fmt.Fprintln(stderr, "moat:", ae.Msg)
		switch ae.Kind {
		case assembly.Usage:
			return exitUsage
		case assembly.NoIsolation:
			return exitNoIsolat
		}
		return exitFailure
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

const rootHelp = `moat runs a local model (through Ollama or any OpenAI-compatible server)
against a folder, the sandbox root (or several: --root again, each its own
boundary). The model gets read-only tools
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

Flags may come anywhere after the command's name; "--" ends them (moat ask
-- "-v: what does it do?"). Every flag can also come from a MOAT_*
environment variable (--max-turns is MOAT_MAX_TURNS) or from a config file:
the one --config or MOAT_CONFIG names, else moat/config in the user config
folder ($XDG_CONFIG_HOME, else ~/.config, on Linux) when it is there. One
"flag value" or "flag = value" per line, # starts a comment; in the file,
~ is the home folder and a relative path is relative to the file's folder.
One file can serve every command: each takes the keys it knows and skips
those of the other commands; 'moat help COMMAND' says which file it reads. The command line wins over the
environment, which wins over the file. The repeatable flags (--deny,
--allow) take a comma-separated list wherever they are given, so one
variable holds several: MOAT_DENY='*.md,*.txt' (a comma inside {} or []
belongs to the glob: *.{md,txt} is one). A MOAT_* variable that is no
flag's is reported, not ignored.

Exit status, the same rule for every command: 0 success; 1 failure, the
world is not as asked (a missing file or folder, no saved session, no model
server, a tool's error); 2 usage, the command line is wrong (an unknown
flag, a value that does not parse, a missing argument); 3 the model used
--max-turns replies without answering (ask); 4 --isolate require and
isolation cannot start; 130 interrupted. The README's table has them all.

Run 'moat help COMMAND' for a command's flags.`
