package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real `go test -json` run over a package with a passing, a failing, a
// skipped test and a failing subtest, and one that does not build: the
// ending names each failure with its package and each skip with its reason.
func TestEndingNamesFailuresAndSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a_test.go": `package a

import "testing"

func TestPass(t *testing.T) {}
func TestFail(t *testing.T) { t.Log("some detail"); t.Fatal("it broke") }
func TestSkip(t *testing.T) { t.Skip("needs ripgrep") }
func TestTable(t *testing.T) {
	t.Run("good", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Error("wrong") })
}
`,
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n",
		"c/c_test.go": "package c\n\nfunc TestNoBuild(t *testing.T) { undefined() }\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOWORK=off")
	stream, _ := cmd.CombinedOutput() // it fails, as it should
	s := newSummary()
	var shown bytes.Buffer
	if err := s.read(bytes.NewReader(stream), &shown); err != nil {
		t.Fatal(err)
	}
	end := s.ending()
	for _, want := range []string{
		"packages: 1 ok, 2 failed; tests: 2 failed, 1 skipped\n",
		"  FAIL example.com/m/a TestFail\n",
		"  FAIL example.com/m/a TestTable/bad\n",
		"  FAIL example.com/m/c (build failed)\n",
		"  skip example.com/m/a TestSkip: needs ripgrep\n",
	} {
		if !strings.Contains(end, want) {
			t.Errorf("the ending lacks %q:\n%s", want, end)
		}
	}
	if strings.Contains(end, "FAIL example.com/m/a TestTable\n") {
		t.Errorf("a test is named for its failed subtest:\n%s", end)
	}
	if !s.anyFailed() {
		t.Error("failures not reported in the exit status")
	}
	// What is shown is what go test shows without -v: failures' output,
	// the packages' lines, not the passing tests.
	for _, want := range []string{"it broke", "some detail", "undefined", "ok  \texample.com/m/b"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, shown.String())
		}
	}
	if strings.Contains(shown.String(), "=== RUN   TestPass") {
		t.Errorf("passing tests are shown:\n%s", shown.String())
	}
}
