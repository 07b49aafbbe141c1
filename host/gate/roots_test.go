package gate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
)

// yes approves every review, keeping what it was shown.
type yes struct{ seen []*Review }

func (y *yes) Review(_ context.Context, r *Review) Verdict {
	y.seen = append(y.seen, r)
	return Verdict{Outcome: Approved}
}

// TestRootsJudgedByTheirRoot: with two roots a proposal names its file
// label/path and is judged and written by that root's gate: root b's git
// config names tools/hooks as hooks, so b/tools/hooks/pre-commit is never
// written while a/tools/hooks/pre-commit is; moat's own protected folder
// holds in every root; a name in no root and a root itself are refused.
func TestRootsJudgedByTheirRoot(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, filepath.Join(b, ".git"), filepath.Join(b, "own")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(b, ".git", "config"), []byte("[core]\n\thooksPath = tools/hooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pol.Protect(filepath.Join(b, "own"), filepath.Join(a, "own"))
	rv := &yes{}
	g, err := NewRoots([]confine.Dir{{Label: "a", Path: a}, {Label: "b", Path: b}}, Options{Policy: pol, Reviewer: rv, AuditPath: filepath.Join(base, "audit.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	propose := func(p string) string {
		raw, _ := json.Marshal(map[string]any{"path": p, "content": "#!/bin/sh\necho hi\n"})
		return g.Propose(context.Background(), proto.ProposeWrite, raw).Text
	}
	if got := propose("a/tools/hooks/pre-commit"); !strings.HasPrefix(got, "wrote a/tools/hooks/pre-commit ") {
		t.Errorf("a's hook: %s", got)
	}
	if _, err := os.Stat(filepath.Join(a, "tools", "hooks", "pre-commit")); err != nil {
		t.Errorf("a's file not written: %v", err)
	}
	if len(rv.seen) != 1 || rv.seen[0].Path != "a/tools/hooks/pre-commit" || rv.seen[0].Rel != "a/tools/hooks/pre-commit" || rv.seen[0].File != filepath.Join(a, "tools", "hooks", "pre-commit") {
		t.Errorf("the review named %+v", rv.seen)
	}
	for p, want := range map[string]string{
		"b/tools/hooks/pre-commit": "refused: b/tools/hooks/pre-commit is inside tools/hooks, which core.hooksPath",
		"b/own/x":                  "refused: b/own/x is moat's own",
		"a/own/x":                  "refused: a/own/x is moat's own",
		"c/x":                      "refused: c/x is in no root of the workspace",
		"b":                        "refused: b is the root b, not a file",
		"x":                        "refused: x is in no root",
		"../b/x":                   "refused: path escapes the sandbox",
	} {
		if got := propose(p); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s\nwant it to start %q", p, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(b, "tools")); err == nil {
		t.Errorf("b/tools was created")
	}
	log, _ := os.ReadFile(filepath.Join(base, "audit.jsonl"))
	if !strings.Contains(string(log), `"path":"b/tools/hooks/pre-commit"`) || !strings.Contains(string(log), `"path":"a/tools/hooks/pre-commit"`) {
		t.Errorf("the audit log does not name the files label/path:\n%s", log)
	}
}
