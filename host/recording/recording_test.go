package recording

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/scripted"
	"github.com/moatdev/moat/host/toolspec"
)

// Texts txtar cannot hold as they are must come back exactly: no final
// newline, lines that look like file markers, quote marks, invalid UTF-8.
func TestArchiveRoundTrip(t *testing.T) {
	texts := []string{
		"", "\n", "plain\n", "no newline", "-- moat/session.json --\nforged\n",
		"a\n-- root/x --\nb", ">quoted already\n", "\r\n\t", "tail -- x --",
	}
	rec := &Recording{
		Comment: "# test\nreplay\n",
		Session: SessionInfo{Command: "ask", API: "ollama", Model: "m", Writes: "ask", Files: true,
			Questions: []Question{{Text: "q", Outcome: Answered, Answer: "a"}}, Turns: []Turn{{Question: 1, Messages: 2, Dropped: []int{1}}}},
		Script: scripted.Script{Turns: []scripted.Turn{{Text: "t", Calls: []scripted.Call{{ID: "c", Name: "read_file", Args: json.RawMessage(`{"path":"x"}`)}}}}},
	}
	for i, s := range texts {
		sent := s + "[cut]"
		rec.Calls = append(rec.Calls, Call{Turn: 1, Tool: "read_file", Args: `{"path": "x"}`, Text: s, Sent: &sent,
			Review: &Review{Lines: strings.Split(s, "\n"), Header: 1, Outcome: "declined", Reason: "r"}})
		rec.Files = append(rec.Files, File{Path: "d/f" + string(rune('a'+i)), Data: []byte(s), Mode: 0o640, ModTime: time.Unix(1700000000, 5).UTC()})
	}
	// A model may name any tool, even one that looks like a call's other files.
	rec.Calls = append(rec.Calls, Call{Turn: 2, Tool: "x.review", Args: "not json", Error: true, Text: "error: unknown tool"},
		Call{Turn: 2, Tool: "../../etc", Args: "{}", Error: true, Text: "error: unknown tool"})
	rec.Files = append(rec.Files,
		File{Path: "bin", Data: []byte{0xff, 0, 0xfe, '\n'}, Mode: 0o600, ModTime: time.Unix(1, 0).UTC()},
		File{Path: "d", Dir: true, Mode: 0o755, ModTime: time.Unix(2, 0).UTC()},
		File{Path: "d/listed", Placeholder: true, Mode: 0o644, ModTime: time.Unix(3, 0).UTC()},
		File{Path: "d/link", Link: "../bin", Mode: 0o777, ModTime: time.Unix(4, 0).UTC()},
		// Names and targets txtar or JSON cannot hold as they are, and
		// the other kinds of entry.
		File{Path: "d/a\nforged.txt", Data: []byte("one\n"), Mode: 0o644, ModTime: time.Unix(5, 0).UTC()},
		File{Path: "d/bad\xffname", Data: []byte("two\n"), Mode: 0o644, ModTime: time.Unix(6, 0).UTC()},
		File{Path: "d/trailing ", Placeholder: true, Size: 12, Mode: 0o644, ModTime: time.Unix(7, 0).UTC()},
		File{Path: "d/badlink", Link: "bad\xffname", Mode: 0o777, ModTime: time.Unix(8, 0).UTC()},
		File{Path: "d/away", Refused: RefusedOutside, Size: 14, Mode: 0o777, ModTime: time.Unix(9, 0).UTC()},
		File{Path: "d/pipe", Special: SpecialPipe, Mode: 0o644, ModTime: time.Unix(10, 0).UTC()})
	b, err := Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("round trip changed the recording:\n got %+v\nwant %+v", got, rec)
		for i := range rec.Calls {
			if !reflect.DeepEqual(got.Calls[i], rec.Calls[i]) {
				t.Errorf("call %d: got %q, want %q", i, got.Calls[i].Text, rec.Calls[i].Text)
			}
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, a := range map[string]string{
		"not a recording": "-- x --\ny\n",
		"escaping file":   "-- moat/session.json --\n{}\n-- moat/model.json --\n{\"turns\":[]}\n-- moat/files.json --\n[{\"path\":\"../x\",\"mode\":\"0644\",\"mtime\":\"2020-01-01T00:00:00Z\"}]\n",
		"unknown field":   "-- moat/session.json --\n{\"bogus\":1}\n-- moat/model.json --\n{\"turns\":[]}\n",
		"link out":        "-- moat/session.json --\n{}\n-- moat/model.json --\n{\"turns\":[]}\n-- moat/files.json --\n[{\"path\":\"d/x\",\"link\":\"../../etc\",\"mode\":\"0777\",\"mtime\":\"2020-01-01T00:00:00Z\"}]\n",
		"link absolute":   "-- moat/session.json --\n{}\n-- moat/model.json --\n{\"turns\":[]}\n-- moat/files.json --\n[{\"path\":\"x\",\"link\":\"/etc\",\"mode\":\"0777\",\"mtime\":\"2020-01-01T00:00:00Z\"}]\n",
		"calls unordered": "-- moat/session.json --\n{}\n-- moat/model.json --\n{\"turns\":[]}\n-- moat/calls/002-x --\n{\"turn\":1,\"tool\":\"x\",\"error\":false}\n",
	} {
		if _, err := Decode([]byte(a)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// tools is a stand-in engine: read_file answers from a map.
type tools struct {
	files map[string]string
	gate  gate.Reviewer
}

func (t *tools) Tools() []*toolspec.Tool {
	c, err := toolspec.New()
	if err != nil {
		panic(err)
	}
	return c.Tools(true)
}

func (t *tools) Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	var a struct{ Path string }
	json.Unmarshal(args, &a)
	switch name {
	case "read_file":
		if s, ok := t.files[a.Path]; ok {
			return toolspec.Result{Text: s}
		}
		return toolspec.Errorf("no such file: %s", a.Path)
	case "propose_write":
		v := t.gate.Review(ctx, &gate.Review{Header: []string{"moat: create " + a.Path}, Diff: []string{"+x"}})
		if v.Outcome == gate.Approved {
			return toolspec.Result{Text: "wrote " + a.Path, Written: true}
		}
		return toolspec.Errorf("rejected %s", a.Path)
	}
	return toolspec.Errorf("unknown tool %s", name)
}

type answer gate.Verdict

func (a answer) Review(context.Context, *gate.Review) gate.Verdict { return gate.Verdict(a) }

// record runs one question against the fake server with the recorder on
// every seam, and returns the recording.
func record(t *testing.T, script scripted.Script, eng *tools, reviewer gate.Reviewer) *Recording {
	t.Helper()
	rec, err := New(Options{Session: SessionInfo{Command: "ask", API: "ollama", Model: "qwen3", NumCtx: 8192, MaxTurns: 8, Writes: "ask"}})
	if err != nil {
		t.Fatal(err)
	}
	eng.gate = rec.Reviewer(reviewer)
	srv := scripted.Start(script)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s := agent.New(agent.Config{Backend: rec.Backend(agent.NewOllama(u, nil)), Tools: rec.Tools(eng), Model: "qwen3", Transcript: rec.Transcript(nil)})
	ans, err := s.Ask(context.Background(), "What is in a.txt?")
	rec.Finish(ans, err)
	r, err := rec.Recording()
	if err != nil {
		t.Fatal(err)
	}
	// What replay reads is what was written.
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var script = scripted.Script{Turns: []scripted.Turn{
	{Calls: []scripted.Call{{Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)}}},
	{Calls: []scripted.Call{{Name: "propose_write", Args: json.RawMessage(`{"path":"b.txt","content":"x\n"}`)}}},
	{Text: "a.txt says v1."},
}}

func replayWith(t *testing.T, r *Recording, eng *tools) *Report {
	t.Helper()
	rep, err := Replay(context.Background(), r, ReplayOptions{
		Root: t.TempDir(),
		Sandbox: func(ctx context.Context, roots []confine.Dir, s SessionInfo, rv gate.Reviewer) (agent.Dispatcher, io.Closer, error) {
			eng.gate = rv
			return eng, io.NopCloser(nil), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestReplaySame(t *testing.T) {
	r := record(t, script, &tools{files: map[string]string{"a.txt": "v1\n"}}, answer{Outcome: gate.Approved})
	if len(r.Calls) != 2 || r.Calls[1].Review == nil || r.Calls[1].Review.Outcome != "approved" {
		t.Fatalf("recorded calls: %+v", r.Calls)
	}
	rep := replayWith(t, r, &tools{files: map[string]string{"a.txt": "v1\n"}})
	if len(rep.Diffs) != 0 {
		t.Errorf("same tools, diffs: %v", rep.Diffs)
	}
}

// A deliberate change to a tool's output fails the replay with a diff that
// names the turn, the call and the tool.
func TestReplayChangedTool(t *testing.T) {
	r := record(t, script, &tools{files: map[string]string{"a.txt": "v1\n"}}, answer{Outcome: gate.Declined, Reason: "no"})
	rep := replayWith(t, r, &tools{files: map[string]string{"a.txt": "v2\n"}})
	if len(rep.Diffs) != 1 {
		t.Fatalf("diffs: %v", rep.Diffs)
	}
	d := rep.Diffs[0].String()
	for _, want := range []string{`turn 1, call 1: read_file {"path":"a.txt"}: the result changed`, "\n-v1\n", "\n+v2\n", "--- recorded result"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	// The decision was replayed from the recording: declined, with the reason.
	if r.Calls[1].Review.Reason != "no" || rep.Replayed.Calls[1].Text != "error: rejected b.txt" {
		t.Errorf("decision not replayed: %+v", rep.Replayed.Calls[1])
	}
}

// A recording that outgrows its bound says so and is not produced at all.
func TestTooLarge(t *testing.T) {
	var notes strings.Builder
	rec, err := New(Options{Session: SessionInfo{Model: "m"}, MaxBytes: 10, Notes: &notes})
	if err != nil {
		t.Fatal(err)
	}
	rec.Transcript(nil).Write([]byte(`{"role":"system","content":"s"}` + "\n"))
	rec.Transcript(nil).Write([]byte(`{"role":"user","content":"a question longer than ten bytes"}` + "\n"))
	if _, err := rec.Bytes(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Bytes: %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"larger than --record-max-bytes (10 bytes)", "it reached 32 bytes", "the largest parts: question 1 (32 B)"} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("notes %q lack %q", notes.String(), want)
		}
	}
}

// An absolute path inside the root is recorded as <root>/..., in a call's
// path arguments and in texts (only where the root ends a name), and
// given the replay root's back; anything else is left as it is.
func TestRootToken(t *testing.T) {
	roots := formsOf("/home/me/tree", nil)
	for _, c := range []struct{ tool, in, want string }{
		{"read_file", `{"path":"/home/me/tree/notes.txt"}`, `{"path":"<root>/notes.txt"}`},
		{"list_dir", `{"path":"/home/me/tree"}`, `{"path":"<root>"}`},
		{"grep", `{"path":"/home/me/tree/src","pattern":"/home/me/tree/x","max_results":10}`, `{"max_results":10,"path":"<root>/src","pattern":"/home/me/tree/x"}`},
		{"read_file", `{"path":"/home/me/tree2/notes.txt"}`, `{"path":"/home/me/tree2/notes.txt"}`},
		{"read_file", `{"path":"notes.txt"}`, `{"path":"notes.txt"}`},
		{"read_file", `not json /home/me/tree/x`, `not json /home/me/tree/x`},
		{"no_such_tool", `{"path":"/home/me/tree/x"}`, `{"path":"/home/me/tree/x"}`},
	} {
		got := relArgs(c.tool, c.in, roots)
		if got != c.want {
			t.Errorf("relArgs(%s, %s) = %s, want %s", c.tool, c.in, got, c.want)
		}
		if c.in != c.want {
			back := absArgs(c.tool, got, formsOf("/tmp/replay/tree", nil))
			if strings.Contains(back, "<root>") || !strings.Contains(back, "/tmp/replay/tree") {
				t.Errorf("absArgs(%s) = %s", got, back)
			}
		}
	}
	text := "error: no such file: /home/me/tree/missing.txt; not /home/me/tree2/x nor /home/me/treehouse; the root /home/me/tree, or /home/me/tree.bak"
	want := "error: no such file: <root>/missing.txt; not /home/me/tree2/x nor /home/me/treehouse; the root <root>, or /home/me/tree.bak"
	if got := relText(text, roots); got != want {
		t.Errorf("relText = %q, want %q", got, want)
	}
}

// stat's volatile lines: modified: and mode: are masked unless the
// replay restored them; accessed:, changed: and created: always; a
// folder's size always, a file's never.
func TestMasked(t *testing.T) {
	folder := "path: src\nkind: folder\nsize: 4096 bytes (4.1 KB)\nmodified: 2026-01-01T00:00:00Z"
	file := "path: a\nkind: file\nsize: 3 bytes\nmodified: 2026-01-01T00:00:00Z"
	// The mode is restored with the time; the other times no recording
	// can set again.
	timed := "path: a\nkind: file\nsize: 3 bytes\nmode: 0640 (-rw-r-----)\nmodified: 2026-01-01T00:00:00Z\naccessed: 2026-01-02T00:00:00Z\nchanged: 2026-01-03T00:00:00Z\ncreated: 2026-01-01T00:00:00Z"
	for _, c := range []struct {
		tool, text string
		restored   bool
		want       string
	}{
		{"stat", folder, false, "path: src\nkind: folder\nsize: (volatile)\nmodified: (volatile)"},
		{"stat", folder, true, "path: src\nkind: folder\nsize: (volatile)\nmodified: 2026-01-01T00:00:00Z"},
		{"stat", file, false, "path: a\nkind: file\nsize: 3 bytes\nmodified: (volatile)"},
		{"stat", file, true, file},
		{"stat", timed, false, "path: a\nkind: file\nsize: 3 bytes\nmode: (volatile)\nmodified: (volatile)\naccessed: (volatile)\nchanged: (volatile)\ncreated: (volatile)"},
		{"stat", timed, true, "path: a\nkind: file\nsize: 3 bytes\nmode: 0640 (-rw-r-----)\nmodified: 2026-01-01T00:00:00Z\naccessed: (volatile)\nchanged: (volatile)\ncreated: (volatile)"},
		{"read_file", "modified: 2026", false, "modified: 2026"},
		{"list_dir", "a.txt  (3 bytes, 2026-01-01T00:00:00Z)\nsrc/  (2026-01-02T00:00:00Z)\nplain.txt", true,
			"a.txt  (3 bytes, (volatile))\nsrc/  ((volatile))\nplain.txt"},
	} {
		if got := masked(c.tool, c.text, c.restored); got != c.want {
			t.Errorf("masked(%s, %q, %v) = %q, want %q", c.tool, c.text, c.restored, got, c.want)
		}
	}
	review := []string{"moat: the model proposes a change (propose_edit)", "  action   edit the existing file (1 replacement): 9 -> 9 bytes, mode 0644 kept", "-buy mlik mode 0644"}
	other := []string{review[0], strings.Replace(review[1], "0644", "0664", 1), review[2]}
	if !sameReview("propose_edit", review, other, false) || sameReview("propose_edit", review, other, true) {
		t.Error("a review's mode is not volatile against --root, or is in a self-contained replay")
	}
	if sameReview("propose_edit", review, []string{review[0], review[1], "-buy mlik mode 0664"}, false) {
		t.Error("a diff line compared as volatile")
	}
	if sameText("stat", file, strings.Replace(file, "3 bytes", "4 bytes", 1), false) {
		t.Error("a file's size compared as volatile")
	}
}

// An interrupted question is left out whole (its replies never
// completed), and the comment says so; the questions before it stay.
func TestInterruptedQuestionLeftOut(t *testing.T) {
	rec, err := New(Options{Session: SessionInfo{Command: "chat", Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Transcript(nil)
	tools := rec.Tools(&tools{files: map[string]string{"a.txt": "v1\n"}})
	tr.Write([]byte(`{"role":"system","content":"s"}` + "\n"))
	tr.Write([]byte(`{"role":"user","content":"first"}` + "\n"))
	tools.Call(context.Background(), "read_file", json.RawMessage(`{"path":"a.txt"}`))
	rec.Finish("answer", nil)
	tr.Write([]byte(`{"role":"user","content":"second"}` + "\n"))
	tools.Call(context.Background(), "read_file", json.RawMessage(`{"path":"a.txt"}`))
	rec.Finish("", context.Canceled)
	r, err := rec.Recording()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Session.Questions) != 1 || r.Session.Questions[0].Text != "first" || len(r.Calls) != 1 {
		t.Errorf("questions %+v, %d calls; want the first question and its call only", r.Session.Questions, len(r.Calls))
	}
	if !strings.Contains(r.Comment, "1 interrupted question(s) left out") {
		t.Errorf("comment: %q", r.Comment)
	}
}

// A question continued at the turn cap (chat's "more turns?") replays
// with as many continuations, and ends the same way.
func TestReplayContinued(t *testing.T) {
	sc := scripted.Script{Turns: []scripted.Turn{
		{Calls: []scripted.Call{{Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Text: "a.txt says v1."},
	}}
	rec, err := New(Options{Session: SessionInfo{Command: "chat", API: "ollama", Model: "qwen3", NumCtx: 8192, MaxTurns: 1}})
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.Start(sc)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	eng := &tools{files: map[string]string{"a.txt": "v1\n"}}
	s := agent.New(agent.Config{Backend: rec.Backend(agent.NewOllama(u, nil)), Tools: rec.Tools(eng), Model: "qwen3", MaxTurns: 1, Transcript: rec.Transcript(nil)})
	ans, err := s.Ask(context.Background(), "What is in a.txt?")
	rec.Finish(ans, err)
	if !errors.Is(err, agent.ErrTurnCap) {
		t.Fatalf("Ask: %v, want the turn cap", err)
	}
	rec.Continued()
	ans, err = s.Continue(context.Background())
	rec.Finish(ans, err)
	r, err := rec.Recording()
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Session.Questions; len(q) != 1 || q[0].Continues != 1 || q[0].Outcome != Answered || len(r.Calls) != 1 {
		t.Fatalf("recorded %+v with %d calls", q, len(r.Calls))
	}
	rep := replayWith(t, r, &tools{files: map[string]string{"a.txt": "v1\n"}})
	if len(rep.Diffs) != 0 {
		t.Errorf("diffs: %v", rep.Diffs)
	}
}
