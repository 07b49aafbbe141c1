package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/mcpserver"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/recording"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/toolspec"
)

// recordFlags are ask's and chat's --record flags.
type recordFlags struct {
	file     string
	files    bool
	maxBytes int64
}

func (r *recordFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.file, "record", "", "record the session in this txtar `file`, to replay it later with 'moat replay' (a regression test)")
	fs.BoolVar(&r.files, "record-files", false, "with --record: also put every file a tool call opens and the names in every folder one lists in the recording, so it replays with no folder (never a denied file)")
	fs.Int64Var(&r.maxBytes, "record-max-bytes", recording.DefaultMaxBytes, "with --record: the largest recording; a session that outgrows it is not recorded, and moat says so")
	validate(fs, "record-max-bytes", positive(&r.maxBytes))
}

// check refuses flags that make no sense together, before anything starts.
func (r *recordFlags) check() error {
	if r.files && r.file == "" {
		return usagef("--record-files needs --record FILE")
	}
	return nil
}

// sessionRecorder is a recording in progress and the file it goes to.
type sessionRecorder struct {
	rec    *recording.Recorder
	closer io.Closer // the confined view of the root, or nil
	file   string
	stderr io.Writer
	gone   bool // removed for outgrowing --record-max-bytes
}

// startRecording begins the recording when --record was given (nil, nil
// when not).
// writes is the --writes in effect (deny when there is no terminal).
func (a *agentFlags) startRecording(e *env, command, model, system, writes string) (*sessionRecorder, error) {
	sess := recording.SessionInfo{
		Command: command, API: a.api, Model: model, NumCtx: a.numCtx, MaxTurns: a.maxTurns,
		Writes: writes, System: system, Think: a.think,
	}
	return a.rec.start(e, &a.c, sess, a.behaviourFlags(model, writes))
}

// start begins a recording of sess in the sandbox c describes. It writes
// the empty recording at once, so that a file that cannot be written is
// reported before the session starts.
func (r *recordFlags) start(e *env, c *common, sess recording.SessionInfo, flags string) (*sessionRecorder, error) {
	if r.file == "" {
		return nil, nil
	}
	cfg, _, err := c.sandbox()
	if err != nil {
		return nil, err
	}
	pol, err := policy.New(c.lim.Deny, c.lim.Allow)
	if err != nil {
		return nil, usagef("%v", err)
	}
	sess.RootName = filepath.Base(cfg.Root)
	sess.Options = c.lim
	sess.NoRedact = !c.redact
	out := &sessionRecorder{file: r.file, stderr: e.stderr}
	var files fs.FS
	if r.files {
		// The files come through the same confined view the tools see.
		cfs, err := confine.New(cfg.Root, cfg.Resolver, pol)
		if err != nil {
			return nil, err
		}
		if c.redact {
			// And as the tools saw them: each file's redacted view.
			cfs.SetRedactor(redact.New())
		}
		out.closer, files = cfs, cfs
	}
	out.rec, err = recording.New(recording.Options{
		Session: sess, Root: cfg.Root, Version: moatVersion(), Flags: flags,
		Files: files, Policy: pol, MaxBytes: r.maxBytes, Notes: e.stderr,
	})
	if err == nil {
		if err = out.rec.WriteFile(r.file); err != nil {
			err = failf("--record: %v", err) // a folder that is not there: the world's, exit 1
		}
	}
	if err != nil {
		out.close()
		return nil, err
	}
	if r.files {
		fmt.Fprintf(e.stderr, "moat: --record-files: %s will hold the content of every file the model reads and the names in every folder it lists, and every file a search opens (never a file the deny-list hides)\n", agent.Sanitize(r.file, false))
	}
	return out, nil
}

// behaviourFlags are the flags that change what a session does, as the
// recording's comment shows them.
func (a *agentFlags) behaviourFlags(model, writes string) string {
	f := []string{"--api " + a.api, "--model " + model, fmt.Sprintf("--num-ctx %d", a.numCtx), fmt.Sprintf("--max-turns %d", a.maxTurns)}
	f = append(f, taggedWords(&a.c.lim, true)...)
	f = append(f, "--writes "+writes)
	if a.think != "" {
		f = append(f, "--think "+a.think)
	}
	f = append(f, taggedWords(&a.c.lim, false)...)
	if a.system != "" {
		f = append(f, "--system "+a.system+" (kept in the recording)")
	}
	return strings.Join(f, " ")
}

// wire puts the recorder on the session's seams.
func (r *sessionRecorder) wire(cfg agent.Config) agent.Config {
	cfg.Backend = r.rec.Backend(cfg.Backend)
	cfg.Tools = r.rec.Tools(cfg.Tools)
	cfg.Transcript = r.rec.Transcript(cfg.Transcript)
	return cfg
}

// mcp wraps moat mcp's engine: each call is recorded, and the recording
// written after it.
func (r *sessionRecorder) mcp(e mcpserver.Engine) mcpserver.Engine {
	return savingEngine{r.rec.MCP(e), r}
}

type savingEngine struct {
	mcpserver.Engine
	r *sessionRecorder
}

func (s savingEngine) Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	res := s.Engine.Call(ctx, name, args)
	s.r.save()
	return res
}

// reviewer wraps a reviewer (the terminal, an MCP client's dialog), so
// each decision is recorded.
func (r *sessionRecorder) reviewer(inner gate.Reviewer) gate.Reviewer { return r.rec.Reviewer(inner) }

// finish records how a question ended and writes the recording so far.
func (r *sessionRecorder) finish(answer string, err error) {
	if r == nil {
		return
	}
	r.rec.Finish(answer, err)
	r.save()
}

// continued records that the person gave the model more turns on the
// question it ran out of turns on (chat's question at --max-turns).
func (r *sessionRecorder) continued() {
	if r != nil {
		r.rec.Continued()
	}
}

// save writes the recording so far, or removes it when it outgrew its
// bound.
func (r *sessionRecorder) save() {
	werr := r.rec.WriteFile(r.file)
	switch {
	case werr == nil || r.gone:
	case errors.Is(werr, recording.ErrTooLarge):
		// What was written before is a cut recording: it goes.
		r.gone = true
		os.Remove(r.file)
		fmt.Fprintf(r.stderr, "moat: --record: %s removed: %v\n", agent.Sanitize(r.file, false), werr)
	default:
		fmt.Fprintf(r.stderr, "moat: --record: %s not written: %v\n", agent.Sanitize(r.file, false), werr)
	}
}

func (r *sessionRecorder) close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}
