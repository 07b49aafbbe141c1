package moattest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOtherModule is a user's project: a module of its own in a temporary
// folder that requires moat (a replace directive points at this
// repository), keeps moat recordings in testdata/, and runs them with
// moattest from its own go test. A kept recording passes; the same
// recording with one tool result changed fails with the diff naming the
// call.
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
	write("go.mod", "module example.com/notes\n\ngo 1.26\n\nrequire (\n\tgithub.com/moatdev/moat v0.0.0\n\tgithub.com/rogpeppe/go-internal v1.16.0\n)\n\nreplace github.com/moatdev/moat => "+repo+"\n")
	write("go.sum", string(sum))
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
`)
	write("testdata/recordings/todos.txtar", string(rec))
	write("testdata/broken/todos.txtar", string(broken))

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
	out, err := run("test", "-count=1", "-run", "TestRecordings", "-v", ".")
	if err != nil {
		t.Fatalf("the user's go test failed: %v\n%s", err, out)
	}
	for _, want := range []string{"--- PASS: TestRecordings/todos", "all the same"} {
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
		"--- FAIL: TestBroken/todos",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
}
