package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/recording"
)

// recordFlags are the --record flags of ask, chat and mcp.
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

// record is the recording the flags ask for, of sess, whose comment
// gives flags; nil without --record.
func (r *recordFlags) record(sess recording.SessionInfo, flags func(writes string) string) *assembly.Record {
	if r.file == "" {
		return nil
	}
	return &assembly.Record{File: r.file, Files: r.files, MaxBytes: r.maxBytes, Session: sess, Flags: flags, Version: moatVersion()}
}

// recording is ask's and chat's --record, of a session with model and
// system prompt.
func (a *agentFlags) recording(command, model, system string) *assembly.Record {
	sess := recording.SessionInfo{
		Command: command, API: a.api, Model: model, NumCtx: a.numCtx, MaxTurns: a.maxTurns,
		System: system, Think: a.think,
	}
	return a.rec.record(sess, func(writes string) string { return a.behaviourFlags(model, writes) })
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
