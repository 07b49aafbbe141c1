package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/mcpserver"
	"github.com/moatdev/moat/host/scripted"
)

// Sandbox is the engine a replay runs every call through: the whole
// sandbox, built by the caller exactly as moat ask (or moat mcp) builds
// it, for roots (one, labelled ".", or the session's several), with the
// recorded limits and lists, and with reviewer
// answering every write proposal (nil when the recording offered no
// writes). For an MCP recording, reviewer is the client's dialog, and the
// engine must also have the Catalog method, as mcpserver.Engine.
type Sandbox func(ctx context.Context, roots []confine.Dir, s SessionInfo, reviewer gate.Reviewer) (agent.Dispatcher, io.Closer, error)

// ReplayOptions configure Replay.
type ReplayOptions struct {
	Sandbox Sandbox
	// Root is the folder to replay against; "" materialises the
	// recording's files (--record-files) in a temporary folder. A
	// recording of several roots replays against a folder holding each
	// as its folder LABEL, or against Roots.
	Root string
	// Roots, for a recording of several roots, are the folders to replay
	// against, one a recorded root, in the recorded order.
	Roots []string
	// Activity gets the activity lines of the replayed session; nil
	// discards them.
	Activity io.Writer
}

// Report is what a replay found.
type Report struct {
	Diffs []Diff
	// Replayed is the recording as the replay saw it: the same replies,
	// decisions and files, with this build's results. Encode it to update
	// the expectations.
	Replayed *Recording
}

// Diff is one difference between the recording and the replay.
type Diff struct {
	Where string // "turn 2, call 3 (read_file notes.txt)" or "question 1"
	What  string // "the result changed", ...
	Diff  string // a unified diff, recorded -> replayed, or ""
}

func (d Diff) String() string {
	s := d.Where + ": " + d.What + "\n"
	if d.Diff != "" {
		s += d.Diff
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
	}
	return s
}

// Replay plays the recording's model side through the fake model server
// and the real agent loop, runs every tool call through opt.Sandbox, and
// compares.
func Replay(ctx context.Context, rec *Recording, opt ReplayOptions) (*Report, error) {
	root := opt.Root
	if root == "" && len(opt.Roots) == 0 {
		if !rec.Session.Files {
			return nil, errors.New("this recording holds no files (it was made without --record-files): give the folder it was made in with --root DIR")
		}
		tmp, err := os.MkdirTemp("", "moat-replay-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		name := rec.Session.RootName
		if name == "" || name == "." || name == "/" || strings.ContainsAny(name, `/\`) {
			name = "root"
		}
		root = filepath.Join(tmp, name)
		if err := Materialize(root, rec.Files); err != nil {
			return nil, err
		}
	}
	dirs, err := replayDirs(rec.Session.Roots, root, opt.Roots, opt.Root == "")
	if err != nil {
		return nil, err
	}
	abs, several := "", dirs
	if len(dirs) == 1 {
		abs, several = dirs[0].Path, nil
	}
	forms := formsOf(abs, several)
	again, err := New(Options{Session: rec.Session, Root: abs, Roots: several, MaxBytes: 1 << 62})
	if err != nil {
		return nil, err
	}
	var reviewer gate.Reviewer
	switch {
	case rec.Session.Writes != "ask":
	case rec.Session.Command == "mcp":
		// The client's dialog, as moat mcp asks; the replaying client
		// answers it from the recording.
		reviewer = again.Reviewer(&mcpserver.Elicitation{})
	default:
		reviewer = again.Reviewer(&fromRecording{rec: rec})
	}
	tools, closer, err := opt.Sandbox(ctx, dirs, rec.Session, reviewer)
	if err != nil {
		return nil, err
	}
	defer closer.Close()

	restored := opt.Root == "" && len(opt.Roots) == 0 // every time restored from the archive
	if rec.Session.Command == "mcp" {
		if err := replayMCP(ctx, rec, again, tools, forms); err != nil {
			return nil, err
		}
		return report(rec, again, restored)
	}
	script := rec.Script
	script.Models = []scripted.Model{{Name: rec.Session.Model, Tools: true}}
	// The model's calls of an absolute path inside the root ("<root>/x")
	// name this root's.
	script.Turns = append([]scripted.Turn(nil), script.Turns...)
	for i := range script.Turns {
		script.Turns[i].Calls = append([]scripted.Call(nil), script.Turns[i].Calls...)
	}
	absScript(script.Turns, forms)
	srv := scripted.Start(script)
	defer srv.Close()
	base, err := url.Parse(srv.URL)
	if err != nil {
		return nil, err
	}
	var backend agent.Backend = agent.NewOllama(base, &http.Client{})
	if rec.Session.API == "openai" {
		backend = agent.NewOpenAI(base, &http.Client{})
	}
	s := agent.New(agent.Config{
		Backend: again.Backend(backend), Tools: again.Tools(tools), Model: rec.Session.Model,
		System: rec.Session.System, MaxTurns: rec.Session.MaxTurns, NumCtx: rec.Session.NumCtx, Think: rec.Session.Think,
		Activity: opt.Activity, Transcript: again.Transcript(nil),
	})
	for _, q := range rec.Session.Questions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if q.Clear {
			s.Clear()
		}
		answer, err := s.Ask(ctx, q.Text)
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		again.Finish(answer, err)
		// More turns, as the person gave them at the turn cap.
		for i := 0; i < q.Continues && errors.Is(err, agent.ErrTurnCap); i++ {
			again.Continued()
			answer, err = s.Continue(ctx)
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			again.Finish(answer, err)
		}
	}
	return report(rec, again, restored)
}

// replayDirs are the roots a replay runs on: the one root (labelled
// "."), or for a recording of several (labels) the folders given, one a
// label in order, or else the folders LABEL of root (as a replay
// restores them, creating those a restored recording has no file of).
func replayDirs(labels []string, root string, given []string, restored bool) ([]confine.Dir, error) {
	switch {
	case len(labels) == 0 && len(given) > 0:
		return nil, fmt.Errorf("this recording was made with one root: give it with --root DIR, once")
	case len(labels) == 0:
		abs, err := filepath.Abs(root)
		return []confine.Dir{{Label: ".", Path: abs}}, err
	case len(given) > 0 && len(given) != len(labels):
		return nil, fmt.Errorf("this recording was made with %d roots (%s): give as many, in that order", len(labels), strings.Join(labels, ", "))
	}
	var dirs []confine.Dir
	for i, l := range labels {
		p := filepath.Join(root, l)
		if len(given) > 0 {
			p = given[i]
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if restored && len(given) == 0 {
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return nil, err
			}
		}
		dirs = append(dirs, confine.Dir{Label: l, Path: abs})
	}
	return dirs, nil
}

// report compares what the replay recorded with the recording; restored
// says whether the replay's tree is the archive's own, every time
// restored.
func report(rec *Recording, again *Recorder, restored bool) (*Report, error) {
	got, err := again.Recording()
	if err != nil {
		return nil, err
	}
	got.Comment, got.Files, got.Script = rec.Comment, rec.Files, rec.Script
	got.Session.Files, got.Session.RootName = rec.Session.Files, rec.Session.RootName
	return &Report{Diffs: compare(rec, got, restored), Replayed: got}, nil
}

// fromRecording answers each review with the decision recorded for the
// call in progress: no terminal, no person.
type fromRecording struct{ rec *Recording }

func (f *fromRecording) Review(ctx context.Context, r *gate.Review) gate.Verdict {
	i := callIndex(ctx)
	if i < 0 || i >= len(f.rec.Calls) || f.rec.Calls[i].Review == nil {
		return gate.Verdict{Outcome: gate.Unavailable, Reason: "the recording has no decision for this change"}
	}
	rv := f.rec.Calls[i].Review
	o, ok := parseOutcome(rv.Outcome)
	if !ok {
		return gate.Verdict{Outcome: gate.Unavailable, Reason: fmt.Sprintf("the recording's decision %q is not one moat knows", rv.Outcome)}
	}
	if o == gate.Approved && r.Cut {
		// The gate's rule holds in a replay too: no one approves what
		// could not be shown.
		return gate.Verdict{Outcome: gate.TooLarge, Reason: "the diff is cut"}
	}
	return gate.Verdict{Outcome: o, Reason: rv.Reason}
}

// compare lists every difference, call by call, then question by
// question. The volatile lines of a tool's answers (proto.Volatile)
// are compared for being there, not for their value, unless restored
// says the replay's tree has them as they were.
func compare(want, got *Recording, restored bool) []Diff {
	var out []Diff
	for i := 0; i < max(len(want.Calls), len(got.Calls)); i++ {
		switch {
		case i >= len(got.Calls):
			c := want.Calls[i]
			out = append(out, Diff{Where: where(i, c), What: "the recorded call was not made in the replay"})
			continue
		case i >= len(want.Calls):
			c := got.Calls[i]
			out = append(out, Diff{Where: where(i, c), What: "the replay made a call the recording does not have"})
			continue
		}
		w, g := want.Calls[i], got.Calls[i]
		at := where(i, w)
		if w.Tool != g.Tool || w.Turn != g.Turn {
			out = append(out, Diff{Where: at, What: fmt.Sprintf("the replay called %s in turn %d instead", g.Tool, g.Turn)})
			continue
		}
		if !sameText(w.Tool, w.Text, g.Text, restored) || w.Error != g.Error {
			what := "the result changed"
			if w.Error != g.Error {
				what = fmt.Sprintf("the result changed (error: %v -> %v)", w.Error, g.Error)
			}
			out = append(out, Diff{Where: at, What: what, Diff: unified("result", w.Text, g.Text)})
		}
		if ws, gs := deref(w.Sent), deref(g.Sent); !sameText(w.Tool, ws, gs, restored) || (w.Sent == nil) != (g.Sent == nil) {
			out = append(out, Diff{Where: at, What: "what the model was sent of the result changed (the context budget)", Diff: unified("sent", orText(w), orText(g))})
		}
		switch {
		case w.Review == nil && g.Review != nil:
			out = append(out, Diff{Where: at, What: "the change was shown for review in the replay, not in the recording", Diff: unified("review", "", joinLines(g.Review.Lines))})
		case w.Review != nil && g.Review == nil:
			out = append(out, Diff{Where: at, What: "the change was shown for review in the recording, not in the replay", Diff: unified("review", joinLines(w.Review.Lines), "")})
		case w.Review != nil && !sameReview(w.Tool, w.Review.Lines, g.Review.Lines, restored):
			out = append(out, Diff{Where: at, What: "the review shown changed", Diff: unified("review", joinLines(w.Review.Lines), joinLines(g.Review.Lines))})
		}
	}
	for i := 0; i < max(len(want.Session.Questions), len(got.Session.Questions)); i++ {
		at := fmt.Sprintf("question %d", i+1)
		if i >= len(got.Session.Questions) || i >= len(want.Session.Questions) {
			out = append(out, Diff{Where: at, What: "the number of questions differs"})
			continue
		}
		w, g := want.Session.Questions[i], got.Session.Questions[i]
		switch {
		case w.Continues != g.Continues:
			out = append(out, Diff{Where: at, What: fmt.Sprintf("the model was given more turns %d times in the recording, %d in the replay", w.Continues, g.Continues)})
		case w.Outcome != g.Outcome:
			out = append(out, Diff{Where: at, What: fmt.Sprintf("it ended differently: %s -> %s", w.Outcome, g.Outcome), Diff: unified("end", w.Answer+w.Error, g.Answer+g.Error)})
		case w.Answer != g.Answer:
			out = append(out, Diff{Where: at, What: "the answer changed", Diff: unified("answer", w.Answer, g.Answer)})
		case w.Outcome != Failed && w.Error != g.Error:
			// A failure's message names the server, which differs.
			out = append(out, Diff{Where: at, What: "the message changed", Diff: unified("message", w.Error, g.Error)})
		}
	}
	for i := 0; i < min(len(want.Session.Turns), len(got.Session.Turns)); i++ {
		w, g := want.Session.Turns[i], got.Session.Turns[i]
		if w.Messages != g.Messages || !slices.Equal(w.Dropped, g.Dropped) {
			out = append(out, Diff{Where: fmt.Sprintf("turn %d", i+1), What: fmt.Sprintf("the request to the model changed: %d messages, %v dropped for the context window -> %d messages, %v dropped", w.Messages, w.Dropped, g.Messages, g.Dropped)})
		}
	}
	if len(want.Session.Turns) != len(got.Session.Turns) {
		out = append(out, Diff{Where: "the session", What: fmt.Sprintf("the model was asked %d times in the recording, %d in the replay", len(want.Session.Turns), len(got.Session.Turns))})
	}
	return out
}

// sameText reports whether a recorded answer and a replayed one are the
// same, their volatile lines compared by the tool's declaration.
func sameText(tool, a, b string, restored bool) bool {
	return a == b || masked(tool, a, restored) == masked(tool, b, restored)
}

func where(i int, c Call) string {
	s := fmt.Sprintf("turn %d, call %d: %s", c.Turn, i+1, agent.Sanitize(c.Tool, false))
	if a := oneLine(c.Args); a != "" && a != "{}" {
		if r := []rune(a); len(r) > 80 {
			a = string(r[:79]) + "…"
		}
		s += " " + agent.Sanitize(a, false)
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orText(c Call) string {
	if c.Sent != nil {
		return *c.Sent
	}
	return c.Text
}

// unified is a unified diff of two texts, recorded -> replayed, with
// every line made safe for a terminal.
func unified(what, a, b string) string {
	d := udiff.Unified("recorded "+what, "replayed "+what, a, b)
	return agent.Sanitize(d, true)
}
