package moattest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/moatdev/moat/moattest"
)

// fakeT is testscript's T, keeping what failed instead of failing this
// test, so the test can say what a run of a hostile recording did.
type fakeT struct {
	mu     sync.Mutex
	failed bool
	msgs   []string
}

func (t *fakeT) Skip(args ...any)  { t.Log(args...); panic(skipped{}) }
func (t *fakeT) Fatal(args ...any) { t.Log(args...); t.FailNow() }
func (t *fakeT) Parallel()         {}
func (t *fakeT) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msgs = append(t.msgs, fmt.Sprint(args...))
}
func (t *fakeT) FailNow() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	panic(failed{})
}
func (t *fakeT) Run(name string, f func(testscript.T)) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(failed); !ok {
				if _, ok := r.(skipped); !ok {
					panic(r)
				}
			}
		}
	}()
	f(t)
}
func (t *fakeT) Verbose() bool { return false }

type failed struct{}
type skipped struct{}

// A recording is data: one whose script holds an exec line (or any
// command but replay) fails before anything of it runs, and the command
// never ran; the same file without moat/session.json is a testscript,
// and its exec runs (the control: the line would have run).
func TestRecordingIsData(t *testing.T) {
	t.Setenv("MOAT_BINARY", filepath.Join(t.TempDir(), "no-moat")) // nothing here may need moat
	for _, tc := range []struct {
		name      string
		recording bool
	}{{"recording", true}, {"script", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, out := t.TempDir(), t.TempDir()
			pwned := filepath.Join(out, "pwned")
			script := "# moat recording: moat ask\nexec sh -c 'touch " + pwned + "'\nreplay\n"
			if tc.recording {
				script += "-- moat/session.json --\n{}\n"
			}
			script += "-- root/a.txt --\nx\n"
			if err := os.WriteFile(filepath.Join(dir, "hostile.txtar"), []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			ft := &fakeT{}
			func() {
				defer func() { recover() }()
				testscript.RunT(ft, moattest.Params(t, dir))
			}()
			_, err := os.Stat(pwned)
			ran := err == nil
			if ran == tc.recording {
				t.Errorf("the exec line ran: %v, want %v; log %q", ran, !tc.recording, ft.msgs)
			}
			if tc.recording && (!ft.failed || !strings.Contains(strings.Join(ft.msgs, "\n"), "a recording is data")) {
				t.Errorf("the recording did not fail saying why: failed %v, log %q", ft.failed, ft.msgs)
			}
		})
	}
}

func TestReplayInWork(t *testing.T) {
	for line, want := range map[string]bool{
		"replay --root root": true, "replay --root a/b": true, "replay --root ..": false, "replay --root ../x": false,
		"replay --root /": false, "replay --root $HOME": false, "replay --update x": false, "replay --root a b": false,
	} {
		if got := moattest.ReplayInWork(line); got != want {
			t.Errorf("replayInWork(%q) = %v, want %v", line, got, want)
		}
	}
}
