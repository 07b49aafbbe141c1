package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/toolspec"
)

// fakeExec records what reaches the guest.
type fakeExec struct {
	got  []proto.Request
	err  error
	text string
}

func (f *fakeExec) Exec(_ context.Context, req proto.Request) (proto.Response, error) {
	f.got = append(f.got, req)
	return proto.Response{ID: req.ID, Text: f.text}, f.err
}
func (f *fakeExec) Close() error { return nil }

type fakeGate struct{ calls []string }

func (g *fakeGate) Propose(_ context.Context, tool string, args json.RawMessage) toolspec.Result {
	g.calls = append(g.calls, tool+" "+string(args))
	return toolspec.Result{Text: "wrote x (1 bytes)"}
}

func newEngine(t *testing.T, ex engine.Executor, p engine.Proposer) *engine.Engine {
	t.Helper()
	cat, err := toolspec.New()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: ex, Proposer: p,
		Limits: proto.Limits{MaxResults: 7}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRefusedCallsNeverReachTheGuest: invalid arguments, lexical escapes and
// denied paths are answered by the engine; the guest sees none of them.
func TestRefusedCallsNeverReachTheGuest(t *testing.T) {
	ex := &fakeExec{text: "ok"}
	e := newEngine(t, ex, nil)
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path":1}`, "error: path must be a string, got an integer (1)"},
		{"read_file", `{"path":"../x"}`, "error: path escapes the sandbox: ../x"},
		{"read_file", `{"path":".env"}`, `error: access denied: .env matches the deny rule ".env"`},
		{"grep", `{"pattern":"x","path":"a/.git/config"}`, `error: access denied: a/.git/config matches the deny rule ".git"`},
		{"nope", `{}`, `error: unknown tool: "nope"`},
		{"propose_write", `{"path":"a","content":"b"}`, "error: propose_write is not available"},
	} {
		r := e.Call(context.Background(), c.tool, json.RawMessage(c.args))
		if !r.IsError || !strings.HasPrefix(r.Text, c.want) {
			t.Errorf("%s %s = %q, want prefix %q", c.tool, c.args, r.Text, c.want)
		}
	}
	if len(ex.got) != 0 {
		t.Fatalf("refused calls reached the guest: %+v", ex.got)
	}
}

func TestCallsAreRouted(t *testing.T) {
	ex := &fakeExec{text: "a.txt"}
	g := &fakeGate{}
	e := newEngine(t, ex, g)
	if r := e.Call(context.Background(), "list_dir", json.RawMessage(`{"path":"."}`)); r.IsError || r.Text != "a.txt" {
		t.Fatalf("list_dir = %+v", r)
	}
	if len(ex.got) != 1 || ex.got[0].Limits.MaxResults != 7 || ex.got[0].Tool != "list_dir" {
		t.Fatalf("guest got %+v", ex.got)
	}
	if r := e.Call(context.Background(), "propose_write", json.RawMessage(`{"path":"x","content":"y"}`)); r.IsError {
		t.Fatalf("propose_write = %+v", r)
	}
	if len(g.calls) != 1 || len(ex.got) != 1 {
		t.Fatalf("write proposal went to gate %v / guest %v", g.calls, ex.got)
	}
	var names []string
	for _, tl := range e.Tools() {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "propose_edit") {
		t.Fatalf("writes not offered with a gate: %v", names)
	}
	if tools := newEngine(t, ex, nil).Tools(); len(tools) != 5 {
		t.Fatalf("without a gate, %d tools offered; want the 5 read-only ones", len(tools))
	}
}

func TestExecutorFailureIsAnErrorResult(t *testing.T) {
	e := newEngine(t, &fakeExec{err: errors.New("runner: the tool ran out of memory")}, nil)
	r := e.Call(context.Background(), "grep", json.RawMessage(`{"pattern":"x"}`))
	if !r.IsError || r.Text != "error: grep failed: runner: the tool ran out of memory" {
		t.Fatalf("got %+v", r)
	}
}

// TestAbsolutePathsInsideTheRoot (issue 15.8): an absolute path inside the
// root reaches the guest relative; one outside is refused naming the root;
// errors name the path as the model gave it.
func TestAbsolutePathsInsideTheRoot(t *testing.T) {
	cat, err := toolspec.New()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	ex := &fakeExec{text: "ok"}
	e, err := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: ex, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if res := e.Call(context.Background(), "read_file", json.RawMessage(`{"path":"`+root+`/src/a.go","offset":3}`)); res.IsError {
		t.Fatalf("inside the root: %+v", res)
	}
	if len(ex.got) != 1 || string(ex.got[0].Args) != `{"offset":3,"path":"src/a.go"}` {
		t.Errorf("the guest got %+v", ex.got)
	}
	res := e.Call(context.Background(), "read_file", json.RawMessage(`{"path":"/etc/passwd"}`))
	if !res.IsError || !strings.Contains(res.Text, "/etc/passwd") || !strings.Contains(res.Text, "root is "+root+";") {
		t.Errorf("outside the root: %+v", res)
	}
	res = e.Call(context.Background(), "read_file", json.RawMessage(`{"path":"`+root+`/.env"}`))
	if want := "access denied: " + root + `/.env matches the deny rule ".env"`; !res.IsError || !strings.Contains(res.Text, want) {
		t.Errorf("denied: %q, want it to contain %q", res.Text, want)
	}
	if len(ex.got) != 1 {
		t.Errorf("refused calls reached the guest: %+v", ex.got)
	}
}

// TestAnswersAreRedacted: issue 18.4. What a read-only tool returns has
// well-known secrets replaced before the caller sees it; with no
// Redactor (--redact=false) it is returned as the guest gave it.
func TestAnswersAreRedacted(t *testing.T) {
	token := "ghp_" + "R8fQ2mZx7LwK1pVt9sNb3cYh5JdUe6Ga4Xo0"
	for _, red := range []*redact.Redactor{redact.New(), nil} {
		ex := &fakeExec{text: "notes.txt:1: token " + token + "\n"}
		cat, _ := toolspec.New()
		pol, _ := policy.New(nil, nil)
		e, err := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: ex, Redactor: red})
		if err != nil {
			t.Fatal(err)
		}
		want := "notes.txt:1: token [redacted: github-pat]\n"
		if red == nil {
			want = ex.text
		}
		if r := e.Call(context.Background(), "grep", json.RawMessage(`{"pattern":"token"}`)); r.Text != want {
			t.Errorf("redactor %v: grep = %q, want %q", red != nil, r.Text, want)
		}
	}
}

// TestAnswerLinesAlone: issue 29.1. The engine's second line judges each
// line of an answer on its own: a BEGIN line at the end of one file's
// hits and "KEY-----" in another's are not a key block, and the second
// file's ordinary lines are shown.
func TestAnswerLinesAlone(t *testing.T) {
	body := strings.Repeat("MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8rN5oH1fQmYxLk2JdV7wE0sR4", 2)
	answer := "a.txt:9: -----BEGIN RSA PRIVATE " + "KEY-----\n" +
		"b.txt:1: ordinary line one " + body + "\n" +
		"b.txt:2: ordinary line two, the END RSA PRIVATE " + "KEY-----\n"
	if got, n := redact.New().Redact(answer); n == 0 {
		t.Fatalf("the whole-text rules see no key across the files (%q): the case tests nothing", got)
	}
	ex := &fakeExec{text: answer}
	cat, _ := toolspec.New()
	pol, _ := policy.New(nil, nil)
	e, err := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: ex, Redactor: redact.New()})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Call(context.Background(), "grep", json.RawMessage(`{"pattern":"KEY|ordinary"}`)); r.Text != answer {
		t.Errorf("grep = %q, want the answer as the guest gave it", r.Text)
	}
}
