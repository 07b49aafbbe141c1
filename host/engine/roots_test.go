package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
)

// twoRoots is an engine over the roots /w/a (label a) and /v/.ssh
// (label .ssh), with a deny rule of its own.
func twoRoots(t *testing.T, ex engine.Executor, p engine.Proposer) *engine.Engine {
	t.Helper()
	cat, err := toolspec.New()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New([]string{"private.txt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: ex, Proposer: p, Roots: []confine.Dir{
		{Label: "a", Path: filepath.FromSlash("/w/a")}, {Label: ".ssh", Path: filepath.FromSlash("/v/.ssh")}}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestCrossRootDotDot: with several roots a path that leaves the root it
// starts in by ".." is refused as an escape before the guest or the gate
// sees it (the guest would clean it to the other root's own name); one
// that stays in its root is not.
func TestCrossRootDotDot(t *testing.T) {
	ex, g := &fakeExec{text: "ok"}, &fakeGate{}
	e := twoRoots(t, ex, g)
	for _, c := range []struct{ tool, args string }{
		{proto.ReadFile, `{"path":"a/../.ssh/notes"}`},
		{proto.ReadFile, `{"path":"a/x/../../.ssh/notes"}`},
		{proto.ListDir, `{"path":"a/.."}`},
		{proto.Grep, `{"pattern":"x","path":"./a/../.ssh"}`},
		{proto.ProposeWrite, `{"path":"a/../.ssh/notes","content":"x"}`},
		{proto.ReadFile, `{"path":"../a/x"}`},
	} {
		r := e.Call(context.Background(), c.tool, json.RawMessage(c.args))
		if !r.IsError || !strings.Contains(r.Text, "escapes the sandbox") {
			t.Errorf("%s %s = %+v, want an escape", c.tool, c.args, r)
		}
	}
	if len(ex.got) != 0 || len(g.calls) != 0 {
		t.Fatalf("refused calls reached the guest %v or the gate %v", ex.got, g.calls)
	}
	for _, args := range []string{`{"path":"a/x/../y"}`, `{"path":"."}`, `{"path":".ssh/notes"}`, `{"path":"a/../a/y"}`} {
		if r := e.Call(context.Background(), proto.ReadFile, json.RawMessage(args)); r.IsError {
			t.Errorf("read_file %s = %+v", args, r)
		}
	}
}

// TestSeveralRootsDenyAndAbsolute: the deny-list judges a path relative
// to its root (a root's own name, .ssh here, is never judged), and an
// absolute path inside a root becomes label/path.
func TestSeveralRootsDenyAndAbsolute(t *testing.T) {
	ex := &fakeExec{text: "ok"}
	e := twoRoots(t, ex, nil)
	for _, args := range []string{`{"path":"a/private.txt"}`, `{"path":".ssh/sub/private.txt"}`, `{"path":"a/.env"}`} {
		if r := e.Call(context.Background(), proto.ReadFile, json.RawMessage(args)); !r.IsError || !strings.Contains(r.Text, policy.ErrDenied.Error()) {
			t.Errorf("read_file %s = %+v, want denied", args, r)
		}
	}
	if len(ex.got) != 0 {
		t.Fatalf("denied calls reached the guest: %v", ex.got)
	}
	for given, want := range map[string]string{"/v/.ssh/known_hosts": ".ssh/known_hosts", "/w/a": "a", "/w/a/src/x.go": "a/src/x.go"} {
		ex.got = nil
		r := e.Call(context.Background(), proto.ReadFile, json.RawMessage(`{"path":"`+given+`"}`))
		if r.IsError || len(ex.got) != 1 || !strings.Contains(string(ex.got[0].Args), `"`+want+`"`) {
			t.Errorf("read_file %s = %+v, reached the guest as %v; want %s", given, r, ex.got, want)
		}
	}
	r := e.Call(context.Background(), proto.ReadFile, json.RawMessage(`{"path":"/etc/passwd"}`))
	if !r.IsError || !strings.Contains(r.Text, "a, .ssh") {
		t.Errorf("read_file /etc/passwd = %+v, want refused naming the roots", r)
	}
}

// TestSeveralRootsDescriptions: with several roots every path tool's
// description ends with how a file is named then; with one root the
// descriptions are the catalogue's, byte for byte.
func TestSeveralRootsDescriptions(t *testing.T) {
	one := newEngine(t, &fakeExec{}, nil)
	cat, _ := toolspec.New()
	for i, tl := range one.Tools() {
		if want := cat.Tools(false)[i].Description; tl.Description != want {
			t.Errorf("one root: %s's description %q, want %q", tl.Name, tl.Description, want)
		}
	}
	for _, tl := range twoRoots(t, &fakeExec{}, nil).Tools() {
		if !strings.Contains(tl.Description, "With several roots,") || !strings.Contains(tl.Description, "its root's name (src/main.go)") {
			t.Errorf("several roots: %s's description %q says nothing of them", tl.Name, tl.Description)
		}
	}
	if d, _ := cat.Lookup(proto.ReadFile); strings.Contains(d.Description, "several roots") {
		t.Errorf("the catalogue itself was changed: %q", d.Description)
	}
}
