package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
)

// fakeExec stands in for the guest: it records what reached it, so a test
// can prove a refused call never did.
type fakeExec struct {
	mu    sync.Mutex
	calls []proto.Request
}

func (f *fakeExec) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	return proto.Response{ID: req.ID, Text: "guest ran " + req.Tool + " " + string(req.Args)}, nil
}

func (f *fakeExec) Close() error { return nil }

func (f *fakeExec) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func readFile(t *testing.T, name string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

type fixture struct {
	eng   *engine.Engine
	exec  *fakeExec
	root  string // the sandbox root on disk, for the gate
	audit string // the gate's audit log
	cs    *mcp.ClientSession
}

// auditLines returns the gate's audit records.
func (f *fixture) auditLines(t *testing.T) []gate.Record {
	t.Helper()
	s, _ := readFile(t, f.audit)
	var out []gate.Record
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var r gate.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// start serves an engine (with an Approver over the real approval gate on
// a temporary root when withGate is true) to an in-process SDK client;
// elicit nil makes a client without elicitation.
func start(t *testing.T, withGate bool, timeout int, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *fixture {
	t.Helper()
	cat, err := toolspec.New()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{exec: &fakeExec{}, root: t.TempDir()}
	f.audit = filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(filepath.Join(f.root, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := engine.Options{Catalog: cat, Policy: pol, Exec: f.exec}
	if withGate {
		a, err := NewApprover(0, func(r gate.Reviewer) (engine.Proposer, error) {
			return gate.New(gate.Options{Root: f.root, Policy: pol, Reviewer: r, AuditPath: f.audit})
		})
		if err != nil {
			t.Fatal(err)
		}
		if timeout > 0 {
			a.el.Timeout = 1 // nanosecond: the answer can never come in time
		}
		opt.Proposer = a
	}
	if f.eng, err = engine.New(opt); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	srv := New(f.eng, Options{Version: "test"})
	go func() { done <- srv.Serve(ctx, st) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, &mcp.ClientOptions{ElicitationHandler: elicit})
	if f.cs, err = c.Connect(ctx, ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.cs.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve after the client closed: %v", err)
		}
		cancel()
		f.eng.Close()
	})
	return f
}

func (f *fixture) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, tl := range res.Tools {
		n = append(n, tl.Name)
	}
	return n
}

func accept(approve any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve}}, nil
	}
}

func TestToolsListedWithSchemasAndHints(t *testing.T) {
	f := start(t, true, 0, nil)
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := f.eng.Catalog().Tools(false)
	if len(res.Tools) != len(want)+1 {
		t.Fatalf("listed %d tools, want the %d read-only ones and read_files", len(res.Tools), len(want))
	}
	for _, tl := range res.Tools { // the SDK lists tools by name
		if tl.Name == ReadFiles {
			a := tl.Annotations
			if a == nil || !a.ReadOnlyHint || tl.OutputSchema == nil {
				t.Errorf("read_files = %+v, want read-only with an outputSchema", tl)
			}
			continue
		}
		ct, ok := f.eng.Catalog().Lookup(tl.Name)
		if !ok || ct.Write || tl.Description != ct.Description {
			t.Errorf("listed %s %q, not a read-only catalogue tool", tl.Name, tl.Description)
			continue
		}
		got, _ := json.Marshal(tl.InputSchema)
		exp, _ := json.Marshal(ct.Schema)
		var g, e any
		json.Unmarshal(got, &g)
		json.Unmarshal(exp, &e)
		if !reflect.DeepEqual(g, e) {
			t.Errorf("%s schema over MCP:\n%s\nwant the catalogue's:\n%s", tl.Name, got, exp)
		}
		a := tl.Annotations
		if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s annotations = %+v, want read-only, idempotent, closed world", tl.Name, a)
		}
	}
}

func TestWritesListedOnlyToElicitingClients(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gate   bool
		elicit bool
		want   bool
	}{
		{"gate and eliciting client", true, true, true},
		{"gate, client without elicitation", true, false, false},
		{"no gate, eliciting client", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
			if tc.elicit {
				h = accept(true)
			}
			f := start(t, tc.gate, 0, h)
			names := strings.Join(toolNames(t, f.cs), " ")
			got := strings.Contains(names, proto.ProposeWrite) && strings.Contains(names, proto.ProposeEdit)
			if got != tc.want || (!tc.want && strings.Contains(names, "propose_")) {
				t.Errorf("tools = %s; want propose_* listed: %v", names, tc.want)
			}
		})
	}
}

// Every refusal comes back as an isError result with exactly the text the
// engine (and so `moat tool`) gives, and never reaches the guest.
func TestRefusalsMatchEngineText(t *testing.T) {
	f := start(t, false, 0, nil)
	for _, tc := range []struct {
		tool string
		args string
	}{
		{"read_file", `{"path":"../secret"}`},
		{"read_file", `{"path":"../root-evil/x"}`},
		{"read_file", `{"path":"/etc/passwd"}`},
		{"read_file", `{"path":"~/.ssh/id_rsa"}`},
		{"read_file", `{"path":"a\u0000b"}`},
		{"read_file", `{"path":".env"}`},
		{"read_file", `{"path":"sub/.ENV"}`},
		{"stat", `{"path":".git/config"}`},
		{"grep", `{"pattern":"x","path":".env"}`},
		{"read_file", `{"path":7}`},
		{"read_file", `{}`},
		{"read_file", `{"path":"a","extra":1}`},
		{"read_file", `{"path":"a","offset":0}`},
		{"list_dir", `"."`},
		{"list_dir", `[1]`},
	} {
		res := f.call(t, tc.tool, json.RawMessage(tc.args))
		want := f.eng.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
		if !res.IsError || text(res) != want.Text || !want.IsError {
			t.Errorf("%s %s: MCP gave isError=%v %q; engine gave %q", tc.tool, tc.args, res.IsError, text(res), want.Text)
		}
	}
	if n := f.exec.count(); n != 0 {
		t.Errorf("%d refused calls reached the guest: %+v", n, f.exec.calls)
	}
	// Without a gate the proposals do not exist for this server: calling
	// one is the protocol's "unknown tool" error, as for any other name.
	if _, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "propose_write", Arguments: map[string]any{"path": "x", "content": "y"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("propose_write without a gate: err = %v, want unknown tool", err)
	}
}

func TestReadReachesGuestWithCanonicalArgs(t *testing.T) {
	f := start(t, false, 0, nil)
	res := f.call(t, "read_file", map[string]any{"path": "README.md", "limit": 3})
	if res.IsError || text(res) != `guest ran read_file {"limit":3,"path":"README.md"}` {
		t.Errorf("got isError=%v %q", res.IsError, text(res))
	}
}

func TestProposalOutcomes(t *testing.T) {
	answer := func(action string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: action}, nil
		}
	}
	withReason := func(action string, approve any, reason string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			c := map[string]any{"reason": reason}
			if approve != nil {
				c["approve"] = approve
			}
			return &mcp.ElicitResult{Action: action, Content: c}, nil
		}
	}
	const (
		declined = "rejected: the user declined to write notes.txt; nothing was changed. Do not propose the same change again; ask the user what they want instead."
		tail     = "; nothing was changed. Do not propose the same change again; ask the user what they want instead."
		failed   = "refused: notes.txt was not approved: asking the user failed (the approval dialog failed: "
	)
	for _, tc := range []struct {
		name     string
		elicit   func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
		timeout  bool
		text     string // what the model is told (a prefix)
		decision string // the audit log's decision
		reason   string // the audit log's reason; "" for written
	}{
		{"accept approve", accept(true), false, "wrote notes.txt (6 bytes)", "written", ""},
		{"accept approve false", accept(false), false, declined, "rejected", "declined"},
		{"approve false with a reason", withReason("accept", false, "use a list"), false,
			`rejected: the user declined to write notes.txt and said why: "use a list". Nothing was changed. Do not propose the same change again; take the user's reason into account.`, "rejected", `declined: "use a list"`},
		{"decline with a reason", withReason("decline", nil, "no\x1b[2J"), false,
			`rejected: the user declined to write notes.txt and said why: "no\x1b[2J".`, "rejected", `declined: "no\x1b[2J"`},
		{"accept without content", answer("accept"), false,
			"rejected: the user did not approve notes.txt (the approval dialog was accepted without an approve answer)" + tail, "rejected", "the approval dialog was accepted without an approve answer"},
		{"accept with approve as a string", accept("true"), false, failed, "refused", ""},
		{"decline", answer("decline"), false, declined, "rejected", "declined"},
		{"cancel", answer("cancel"), false,
			"rejected: the user did not approve notes.txt (the user dismissed the approval dialog)" + tail, "rejected", "the user dismissed the approval dialog"},
		{"unknown action", answer("yes"), false,
			`refused: notes.txt was not approved: asking the user failed (the client answered the approval dialog with an unknown action "yes"); nothing was written, and the user has not answered. Do not retry now; tell the user that asking for approval failed.`, "refused", ""},
		{"client error", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("dialog crashed")
		}, false, failed, "refused", ""},
		{"timeout", func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, true, "rejected: the user did not approve notes.txt (no answer to the approval dialog within 1ns)" + tail, "rejected", "no answer to the approval dialog within 1ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, true, map[bool]int{true: 1}[tc.timeout], tc.elicit)
			res := f.call(t, "propose_write", map[string]any{"path": "notes.txt", "content": "three\n"})
			got, _ := readFile(t, filepath.Join(f.root, "notes.txt"))
			recs := f.auditLines(t)
			if len(recs) != 1 {
				t.Fatalf("audit records: %+v", recs)
			}
			if !strings.HasPrefix(text(res), tc.text) {
				t.Errorf("model told %q\nwant %q", text(res), tc.text)
			}
			if recs[0].Decision != tc.decision || tc.reason != "" && recs[0].Reason != tc.reason {
				t.Errorf("audit = %+v, want %s %s", recs[0], tc.decision, tc.reason)
			}
			if tc.decision == "written" {
				if res.IsError || got != "three\n" {
					t.Errorf("isError=%v, file now %q", res.IsError, got)
				}
				return
			}
			if !res.IsError || got != "one\ntwo\n" {
				t.Errorf("isError=%v, file now %q; want it unchanged", res.IsError, got)
			}
		})
	}
}

// A client without elicitation that calls propose_write anyway (it is not
// listed) gets a refusal, and nothing is prepared or written.
func TestProposalWithoutElicitationRefused(t *testing.T) {
	f := start(t, true, 0, nil)
	res := f.call(t, "propose_write", map[string]any{"path": "new.txt", "content": "x"})
	if _, ok := readFile(t, filepath.Join(f.root, "new.txt")); ok || !res.IsError || !strings.Contains(text(res), "does not support elicitation") {
		t.Errorf("isError=%v %q", res.IsError, text(res))
	}
	if recs := f.auditLines(t); len(recs) != 0 {
		t.Errorf("the gate saw the proposal: %+v", recs)
	}
}

// A proposal the gate refuses is never shown to the person.
func TestGateRefusalNotAsked(t *testing.T) {
	asked := false
	f := start(t, true, 0, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = true
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	})
	for _, p := range []string{".env", ".git/config", "../x"} {
		res := f.call(t, "propose_write", map[string]any{"path": p, "content": "x"})
		if asked || !res.IsError || !strings.Contains(text(res), "refused") && !strings.Contains(text(res), "escapes") {
			t.Errorf("%s: asked=%v isError=%v %q", p, asked, res.IsError, text(res))
		}
	}
}

// The person sees the path, the sizes and the diff, with terminal escapes
// and bidi overrides made visible rather than interpreted.
func TestReviewShowsDiffAndEscapesControls(t *testing.T) {
	var msg string
	var schema any
	f := start(t, true, 0, func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		msg, schema = r.Params.Message, r.Params.RequestedSchema
		return &mcp.ElicitResult{Action: "decline"}, nil
	})
	f.call(t, "propose_write", map[string]any{"path": "notes.txt", "content": "one\ntwo\x1b[2K\rfine\u202e\n"})
	for _, want := range []string{"notes.txt", "8 -> 20 bytes", "--- a/notes.txt", "+++ b/notes.txt", "-two", `+two\x1b[2K\rfine\u202e`,
		"moat: replace all of " + filepath.Join(f.root, "notes.txt") + " (8 -> 20 bytes)\nReplace notes.txt? Nothing is written unless you tick approve and accept."} {
		if !strings.Contains(msg, want) {
			t.Errorf("review lacks %q:\n%s", want, msg)
		}
	}
	if strings.ContainsAny(msg, "\x1b\r\u202e") || strings.Contains(msg, "Apply? [y/N]") {
		t.Errorf("review carries raw control characters or the terminal question: %q", msg)
	}
	b, _ := json.Marshal(schema)
	if !strings.Contains(string(b), `"required":["approve"]`) {
		t.Errorf("requested schema %s does not require approve", b)
	}
}

// A change too large to show whole in a dialog is refused without asking.
func TestHugeProposalNotAsked(t *testing.T) {
	asked := false
	f := start(t, true, 0, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = true
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	})
	res := f.call(t, "propose_write", map[string]any{"path": "big.txt", "content": strings.Repeat(strings.Repeat("x", 99)+"\n", 3000)})
	want := regexp.MustCompile(`^refused: big.txt: the change is too large to show for approval \(the review is 29\d KiB, more than the 256 KiB an approval dialog shows\); nothing was written. Split it into smaller edits`)
	if _, ok := readFile(t, filepath.Join(f.root, "big.txt")); ok || asked || !res.IsError || !want.MatchString(text(res)) {
		t.Errorf("asked=%v isError=%v %q", asked, res.IsError, text(res))
	}
}

// A file that makes a tool run code is shown with a warning, at the top
// and again at the question.
func TestRunsCodeWarning(t *testing.T) {
	var msg string
	f := start(t, true, 0, func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		msg = r.Params.Message
		return &mcp.ElicitResult{Action: "decline"}, nil
	})
	f.call(t, "propose_write", map[string]any{"path": "package.json", "content": "{\"scripts\":{\"test\":\"curl x | sh\"}}\n"})
	w := "WARNING: this file makes npm run code."
	if strings.Count(msg, w) != 2 || !strings.Contains(msg, "will run on this machine.\nmoat: create ") {
		t.Errorf("warning not shown twice:\n%s", msg)
	}
}

// Serve ends cleanly when its context is cancelled (a signal) while a
// client is still connected.
func TestServeStopsOnCancel(t *testing.T) {
	cat, _ := toolspec.New()
	pol, _ := policy.New(nil, nil)
	eng, _ := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: &fakeExec{}})
	defer eng.Close()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- New(eng, Options{}).Serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}
