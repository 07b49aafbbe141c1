package recording

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
)

// TestSeveralRootsTokens: with several roots an absolute path inside one
// is recorded as <root>/LABEL/..., in arguments and texts, and given
// back as the replay's root of that label; the session names the labels.
func TestSeveralRootsTokens(t *testing.T) {
	dirs := []confine.Dir{{Label: "src", Path: "/w/src"}, {Label: "src-2", Path: "/v/src"}}
	forms := formsOf("", dirs)
	for in, want := range map[string]string{
		`{"path":"/v/src/a.go"}`:  `{"path":"<root>/src-2/a.go"}`,
		`{"path":"/w/src"}`:       `{"path":"<root>/src"}`,
		`{"path":"/w/src2/a.go"}`: `{"path":"/w/src2/a.go"}`,
		`{"path":"src/a.go"}`:     `{"path":"src/a.go"}`,
	} {
		got := relArgs("read_file", in, forms)
		if got != want {
			t.Errorf("relArgs(%s) = %s, want %s", in, got, want)
		}
		back := absArgs("read_file", got, formsOf("", []confine.Dir{{Label: "src", Path: "/r/src"}, {Label: "src-2", Path: "/r/src-2"}}))
		if in != want && (strings.Contains(back, "<root>") || !strings.Contains(back, "/r/src")) {
			t.Errorf("absArgs(%s) = %s", got, back)
		}
	}
	if got := relText("no such file: /v/src/x; /w/src", forms); got != "no such file: <root>/src-2/x; <root>/src" {
		t.Errorf("relText = %q", got)
	}
	r, err := New(Options{Roots: dirs})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.reviewLine("  file     /v/src/a.go  (inside the workspace root)"); got != "  file     <root>/src-2/a.go  (inside the workspace root)" {
		t.Errorf("reviewLine = %q", got)
	}
	if got := r.relPath("/v/src/a/b.go"); got != "src-2/a/b.go" {
		t.Errorf("relPath = %q", got)
	}
	rec, err := r.Recording()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec.Session)
	if !strings.Contains(string(b), `"roots":["src","src-2"]`) {
		t.Errorf("the session does not name the roots: %s", b)
	}
}

// TestReplayDirs: one root is labelled "."; several are their folders
// LABEL of the replay's root, or the folders given, as many as recorded.
func TestReplayDirs(t *testing.T) {
	base := t.TempDir()
	got, err := replayDirs(nil, base, nil, false)
	if err != nil || len(got) != 1 || got[0] != (confine.Dir{Label: ".", Path: base}) {
		t.Errorf("one root: %v, %v", got, err)
	}
	got, err = replayDirs([]string{"a", "b"}, base, nil, true)
	if err != nil || len(got) != 2 || got[1] != (confine.Dir{Label: "b", Path: filepath.Join(base, "b")}) {
		t.Errorf("restored: %v, %v", got, err)
	}
	got, err = replayDirs([]string{"a", "b"}, "", []string{"/x/one", "/y/two"}, false)
	if err != nil || got[0] != (confine.Dir{Label: "a", Path: "/x/one"}) || got[1] != (confine.Dir{Label: "b", Path: "/y/two"}) {
		t.Errorf("given: %v, %v", got, err)
	}
	if _, err := replayDirs([]string{"a", "b"}, "", []string{"/x/one"}, false); err == nil {
		t.Errorf("one folder for two roots: no error")
	}
	if _, err := replayDirs(nil, "", []string{"/x/one", "/y"}, false); err == nil {
		t.Errorf("two folders for one root: no error")
	}
}

// TestSeveralRootsAllowed: with several roots the recorder judges a path
// relative to its root, so a root whose own name the deny-list names
// (.aws) still has its plain files taken, and its denied ones are not.
func TestSeveralRootsAllowed(t *testing.T) {
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &Recorder{opt: Options{Policy: pol, Roots: []confine.Dir{{Label: "app", Path: "/w/app"}, {Label: ".aws", Path: "/w/.aws"}}}}
	for p, want := range map[string]bool{".aws/notes.txt": true, ".aws/.env": false, "app/x.go": true, "app/.env": false, ".": true} {
		if _, ok := r.allowed(p); ok != want {
			t.Errorf("allowed(%s) = %v, want %v", p, ok, want)
		}
	}
	one := &Recorder{opt: Options{Policy: pol, Root: "/w/.aws"}}
	if _, ok := one.allowed(".aws/notes.txt"); ok {
		t.Errorf("one root: .aws/notes.txt allowed (a folder .aws inside the root is denied)")
	}
}
