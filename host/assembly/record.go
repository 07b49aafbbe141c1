package assembly

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/mcpserver"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/recording"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/runner"
	"github.com/moatdev/moat/host/toolspec"
)

// Record asks for the session to be recorded (--record).
type Record struct {
	File     string // the txtar file
	Files    bool   // --record-files: the files the calls open, too
	MaxBytes int64  // the largest recording (0: recording's default)
	// Session is what the command knows of the session (command, API,
	// model, ...); Open fills in the root's name, the limits, the
	// redaction and the --writes in effect.
	Session recording.SessionInfo
	// Flags is the comment's command line, given the --writes in effect.
	Flags   func(writes string) string
	Version string    // moat's, for the comment
	Notes   io.Writer // the recording's notices (nil: Options.Notes)
}

// Recorder is a recording in progress and the file it goes to, written
// again after every question (or MCP call).
type Recorder struct {
	rec    *recording.Recorder
	closer io.Closer // the confined view of the root, or nil
	file   string
	notes  io.Writer
	gone   bool // removed for outgrowing its bound
}

// startRecording begins the recording, writing it empty at once.
func (o *Options) startRecording(cfg runner.Config, writes string) (*Recorder, error) {
	r := o.Record
	pol, err := policy.New(o.Limits.Deny, o.Limits.Allow)
	if err != nil {
		return nil, usagef("%v", err)
	}
	sess := r.Session
	dirs := cfg.Dirs()
	sess.RootName = filepath.Base(dirs[0].Path)
	sess.Options = o.Limits // with NoRedact
	sess.Writes = writes
	out := &Recorder{file: r.File, notes: r.Notes}
	if out.notes == nil {
		out.notes = o.notes()
	}
	var files fs.FS
	if r.Files {
		// The files come through the same confined view the tools see.
		cfs, err := confine.NewRoots(dirs, cfg.Resolver, pol)
		if err != nil {
			return nil, err
		}
		if !o.Limits.NoRedact {
			// And as the tools saw them: each file's redacted view.
			cfs.SetRedactor(redact.New())
		}
		out.closer, files = cfs, cfs
	}
	flags := ""
	if r.Flags != nil {
		flags = r.Flags(writes)
	}
	out.rec, err = recording.New(recording.Options{
		Session: sess, Root: cfg.Root, Roots: cfg.Roots, Version: r.Version, Flags: flags,
		Files: files, Policy: pol, MaxBytes: r.MaxBytes, Notes: out.notes,
	})
	if err == nil {
		if err = out.rec.WriteFile(r.File); err != nil {
			err = failf("--record: %v", err) // a folder that is not there: the world's
		}
	}
	if err != nil {
		out.close()
		return nil, err
	}
	if r.Files {
		fmt.Fprintf(out.notes, "moat: --record-files: %s will hold the content of every file the model reads and the names in every folder it lists, and every file a search opens (never a file the deny-list hides)\n", agent.Sanitize(r.File, false))
	}
	return out, nil
}

// Wire puts the recorder on an agent session's seams: the backend, the
// tools and the transcript.
func (r *Recorder) Wire(cfg agent.Config) agent.Config {
	cfg.Backend = r.rec.Backend(cfg.Backend)
	cfg.Tools = r.rec.Tools(cfg.Tools)
	cfg.Transcript = r.rec.Transcript(cfg.Transcript)
	return cfg
}

// MCP wraps moat mcp's engine: each call is recorded, and the recording
// written after it.
func (r *Recorder) MCP(e mcpserver.Engine) mcpserver.Engine {
	return savingEngine{r.rec.MCP(e), r}
}

type savingEngine struct {
	mcpserver.Engine
	r *Recorder
}

func (s savingEngine) Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	res := s.Engine.Call(ctx, name, args)
	s.r.Save()
	return res
}

// Reviewer wraps a reviewer (the terminal, an MCP client's dialog), so
// each decision is recorded.
func (r *Recorder) Reviewer(inner gate.Reviewer) gate.Reviewer { return r.rec.Reviewer(inner) }

// Finish records how a question ended and writes the recording so far; a
// nil Recorder does nothing.
func (r *Recorder) Finish(answer string, err error) {
	if r == nil {
		return
	}
	r.rec.Finish(answer, err)
	r.Save()
}

// Continued records that the person gave the model more turns on the
// question it ran out of turns on; a nil Recorder does nothing.
func (r *Recorder) Continued() {
	if r != nil {
		r.rec.Continued()
	}
}

// Save writes the recording so far, or removes it when it outgrew its
// bound (a cut recording would replay as a different session).
func (r *Recorder) Save() {
	werr := r.rec.WriteFile(r.file)
	switch {
	case werr == nil || r.gone:
	case errors.Is(werr, recording.ErrTooLarge):
		r.gone = true
		os.Remove(r.file)
		fmt.Fprintf(r.notes, "moat: --record: %s removed: %v\n", agent.Sanitize(r.file, false), werr)
	default:
		fmt.Fprintf(r.notes, "moat: --record: %s not written: %v\n", agent.Sanitize(r.file, false), werr)
	}
}

func (r *Recorder) close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}
