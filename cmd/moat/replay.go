package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/limits"
	"github.com/moatdev/moat/host/recording"
)

func replayCommand(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("moat replay", flag.ContinueOnError)
	var c common
	var update bool
	// Only the flags that say where and how tightly the sandbox runs: the
	// limits and lists that change results come from the recording; the
	// options a recording does not keep (how a call is held: --resolver,
	// --isolate, --timeout) are this command line's.
	c.registerSandbox(fs, "", "replay against this `folder` (as it was when recorded) instead of the files in the recording; a recording of several roots: once per root, in the recorded order, or once for a folder that holds each as its label",
		func(f reflect.StructField) bool { return !limits.Recorded(f) })
	fs.BoolVar(&update, "update", false, "rewrite the recording's expectations with what this build returns")
	validate(fs, "root", func() error { return assembly.CheckRoot(c.root()) })
	return &ffcli.Command{
		Name:       "replay",
		ShortUsage: "moat replay [flags] FILE.txtar",
		ShortHelp:  "replay a recorded session (moat ask/chat --record) as a regression test",
		LongHelp: `Plays a session recorded with 'moat ask --record FILE' or 'moat chat --record
FILE' against this build of moat, with no model server: the model's replies
come from the recording, every tool call is made again through the whole
sandbox (engine, guest, confined filesystem, isolation as --isolate says),
and every write proposal is answered with the decision recorded for it (no
terminal). A session recorded with 'moat mcp --record FILE' is replayed
through moat's MCP server, its client's calls made again in order and each
approval dialog answered as recorded. Each result, each review of a change and how each question ended
are compared byte for byte with the recording.

A recording made with --record-files holds every file a call opened (with
its time), the names in every folder a call listed and every path a call
described; replay recreates them in a temporary folder. Otherwise give the
folder it was made in with --root (a fresh checkout or a copy will do): the
approved changes in the recording are made there again, and the lines of an
answer that a copy changes (stat's modified:) are compared for being there,
not for their value.

Exit status: 0 when everything is the same; 1 when something changed, with a
unified diff on standard output for each call that changed, naming the turn
and the tool; 1 also when the recording is missing or cannot be read; 2
usage; 4 when --isolate require and isolation cannot start here. --update rewrites the recording's results, reviews
and answers with what this build returns, and exits 0.`,
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return usagef("replay takes one recording, e.g. moat replay session.txtar")
			}
			return replay(ctx, e, &c, args[0], update)
		},
	}
}

func replay(ctx context.Context, e *env, c *common, file string, update bool) error {
	root, roots := "", []string(nil)
	switch len(c.roots) {
	case 0:
	case 1:
		root = c.root()
	default:
		roots = c.roots
	}
	// A recording that is not there, or not one, is the world not as
	// asked (exit 1), not a wrong command line.
	data, err := os.ReadFile(file)
	if err != nil {
		return fileError("", file, err) // a missing recording is the world's, not the command line's: exit 1
	}
	rec, err := recording.Decode(data)
	if err != nil {
		return failf("%s: %v", agent.Sanitize(file, false), err)
	}
	if len(c.roots) > 0 && rec.Session.Writes == "ask" {
		if n := approved(rec); n > 0 {
			fmt.Fprintf(e.stderr, "moat replay: the recording approves %d change(s); they are made again in %s\n", n, agent.Sanitize(strings.Join(c.roots, ", "), false))
		}
	}
	rep, err := recording.Replay(ctx, rec, recording.ReplayOptions{
		Root:    root,
		Roots:   roots,
		Sandbox: replaySandbox(c, e),
	})
	if err != nil {
		return err
	}
	name := agent.Sanitize(file, false)
	if update {
		b, err := recording.Encode(rep.Replayed)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(file, b); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "moat replay: %s updated (%d difference(s))\n", name, len(rep.Diffs))
		return nil
	}
	if len(rep.Diffs) == 0 {
		fmt.Fprintf(e.stdout, "moat replay: %s: %d question(s), %d tool call(s), all the same\n", name, len(rec.Session.Questions), len(rec.Calls))
		return nil
	}
	for _, d := range rep.Diffs {
		io.WriteString(e.stdout, d.String())
	}
	against := ""
	if root != "" {
		against = " against --root " + agent.Sanitize(root, false)
	}
	return exitError{code: exitFailure, msg: fmt.Sprintf("replay of %s%s: %d difference(s); 'moat replay --update %s' accepts them", name, against, len(rep.Diffs), name)}
}

func approved(rec *recording.Recording) int {
	n := 0
	for _, c := range rec.Calls {
		if c.Review != nil && c.Review.Outcome == "approved" {
			n++
		}
	}
	return n
}

// replaySandbox opens the sandbox exactly as ask, chat and mcp do, from
// the recording's limits, lists and redaction and this command's sandbox
// flags, with the recording answering for the gate (through the MCP
// approver for a recording of moat mcp, as it served it).
func replaySandbox(c *common, e *env) recording.Sandbox {
	return func(ctx context.Context, roots []confine.Dir, s recording.SessionInfo, rv gate.Reviewer) (agent.Dispatcher, io.Closer, error) {
		o := *c.opts(e)
		o.Roots = nil
		for _, d := range roots {
			o.Roots = append(o.Roots, d.Path)
		}
		o.Limits = limits.Replayed(s.Options, c.lim) // no --redact: it redacts as the session did
		by := assembly.Recorded
		if s.Command == "mcp" {
			by = assembly.Client
		}
		o.Writes = assembly.Writes{Offer: rv != nil, By: by, Reviewer: rv}
		sb, err := assembly.Open(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		return sb.Engine, sb, nil
	}
}

// writeFileAtomic replaces name whole: a temporary file renamed over it.
func writeFileAtomic(name string, b []byte) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	tmp := name + ".moat-update"
	if err := os.WriteFile(tmp, b, st.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
