package moattest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/moatdev/moat/host/recording"
)

// TestOtherModule is a user's project: a module of its own in a temporary
// folder, set up exactly as the README's recipe says for a local clone of
// moat (go mod edit -replace to this repository, go mod edit -tool, go mod
// tidy), that keeps moat recordings in testdata/ and runs them with
// moattest from its own go test. A kept recording passes, and so does one
// made without --record-files that replays against testdata/tree (a
// relative --root is the test's folder's); the same recording with one
// tool result changed fails with the diff naming the call, and a hint
// that names the recording's own file; a --root that is nowhere is a
// failure that says where it looked, not a difference.
func TestOtherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds moat and a module in a temporary folder")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(repo, "testscripts", "replay", "recorded_openai.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	broken := bytes.Replace(rec, []byte("src/util.go:3: // TODO: tests\n"), []byte("src/util.go:3: // TODO: more tests\n"), 1)
	if bytes.Equal(broken, rec) {
		t.Fatal("the recording no longer has the line this test changes")
	}

	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/notes\n\ngo 1.26\n")
	write("go.sum", string(sum)) // offline: the hashes go mod tidy would fetch
	// The user's whole regression test, as the README shows it.
	write("moat_test.go", `package notes

import (
	"testing"

	"github.com/moatdev/moat/moattest"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestRecordings(t *testing.T) {
	testscript.Run(t, moattest.Params(t, "testdata/recordings"))
}

func TestBroken(t *testing.T) {
	testscript.Run(t, moattest.Params(t, "testdata/broken"))
}

func TestNowhere(t *testing.T) {
	testscript.Run(t, moattest.Params(t, "testdata/nowhere"))
}
`)
	write("testdata/recordings/todos.txtar", string(rec))
	write("testdata/broken/todos.txtar", string(broken))
	// The same session without its files, replayed against the tree in
	// testdata/tree, as a recording made without --record-files is kept.
	plain := withoutFiles(t, rec, "replay --root testdata/tree")
	write("testdata/recordings/plain.txtar", string(plain))
	held, err := recording.Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := recording.Materialize(filepath.Join(dir, "testdata", "tree"), held.Files); err != nil {
		t.Fatal(err)
	}
	nowhere := withoutFiles(t, rec, "replay --root testdata/nosuch")
	write("testdata/nowhere/plain.txtar", string(nowhere))
	// A wrong command line: moat replay exits 2, which is no difference.
	// A recording may hold only replay (a recording is data), so the
	// wrong line is in an ordinary script that names a recording.
	write("testdata/nowhere/usage.txtar", "! replay --no-such-flag "+filepath.Join(dir, "testdata", "recordings", "todos.txtar")+"\n")

	run := func(args ...string) (string, error) {
		cmd := exec.Command(gobin, args...)
		cmd.Dir = dir
		// Offline: everything comes from this repository's module cache,
		// and -mod=mod lets the go command fill in the indirect
		// requirements itself.
		cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The README's recipe for a local clone, verbatim but for the path.
	for _, step := range [][]string{
		{"mod", "edit", "-replace", "github.com/moatdev/moat=" + repo},
		{"mod", "edit", "-tool", "github.com/moatdev/moat/cmd/moat"},
		// -e only because this test is offline: tidy would fetch the
		// test-only requirements of moat's requirements (a module of
		// the MCP SDK's tests) that no build here needs nor has.
		{"mod", "tidy", "-e"},
	} {
		if out, err := run(step...); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(step, " "), err, out)
		}
	}
	out, err := run("test", "-count=1", "-run", "TestRecordings", "-v", ".")
	if err != nil {
		t.Fatalf("the user's go test failed: %v\n%s", err, out)
	}
	for _, want := range []string{"--- PASS: TestRecordings/todos", "--- PASS: TestRecordings/plain", "all the same"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
	out, err = run("test", "-count=1", "-run", "TestBroken", ".")
	if err == nil {
		t.Fatalf("a changed result passed:\n%s", out)
	}
	for _, want := range []string{
		`turn 2, call 4: grep {"pattern":"TODO","path":"src"}: the result changed`,
		"-src/util.go:3: // TODO: more tests",
		"+src/util.go:3: // TODO: tests",
		"'moat replay --update " + filepath.Join(dir, "testdata", "broken", "todos.txtar") + "' accepts them",
		"--- FAIL: TestBroken/todos",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".moat-recording") {
		t.Errorf("a hint names the temporary copy, not the recording:\n%s", out)
	}
	out, err = run("test", "-count=1", "-run", "TestNowhere", ".")
	if err == nil {
		t.Fatalf("a --root that is nowhere passed:\n%s", out)
	}
	for _, want := range []string{
		"replay: --root testdata/nosuch: no such folder in the script's $WORK",
		"nor in the test's folder (" + filepath.Join(dir, "testdata", "nosuch") + ")",
		"replay: moat replay refused its command line (exit status 2; its message is above): --no-such-flag",
		"--- FAIL: TestNowhere/usage",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "differs") {
		t.Errorf("a --root that is nowhere reported as a difference:\n%s", out)
	}
}

// withoutFiles is a recording made with --record-files as it would be
// without: no root/ and no moat/files.json, the session saying so, its
// last line replayLine.
func withoutFiles(t *testing.T, rec []byte, replayLine string) []byte {
	t.Helper()
	a := txtar.Parse(rec)
	var kept []txtar.File
	for _, f := range a.Files {
		switch {
		case strings.HasPrefix(f.Name, "root/"), f.Name == "moat/files.json":
		case f.Name == "moat/session.json":
			d := bytes.Replace(f.Data, []byte(`  "files": true,`+"\n"), nil, 1)
			if bytes.Equal(d, f.Data) {
				t.Fatal("the recording's session no longer says \"files\": true")
			}
			kept = append(kept, txtar.File{Name: f.Name, Data: d})
		default:
			kept = append(kept, f)
		}
	}
	comment := strings.TrimSuffix(string(a.Comment), "replay\n") + replayLine + "\n"
	return txtar.Format(&txtar.Archive{Comment: []byte(comment), Files: kept})
}
