package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/scripted"
)

// startMoatPty runs the moat binary (this test binary under the name
// moat) with a pty as its controlling terminal, stdin, stdout and
// stderr, as a person runs it. The gate's typed-ahead keys are not kept
// (MOAT_TEST_TYPEAHEAD is unset).
func startMoatPty(t *testing.T, srv *scripted.Server, args ...string) *ptyChat {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MOAT_TEST_TYPEAHEAD=") {
			env = append(env, kv)
		}
	}
	return startOnPty(t, srv, env, 0, args...)
}

// answerAt waits for the nth question and types keys at it until the
// screen shows it was answered (a key typed in the instant between the
// question's drawing and the gate's flush is discarded too).
func (p *ptyChat) answerAt(n int, keys string) {
	p.t.Helper()
	p.waitCount("[y]es", n)
	for deadline := time.Now().Add(20 * time.Second); strings.Count(p.screen.String(), "moat: not written") < n; {
		if time.Now().After(deadline) {
			p.t.Fatalf("question %d was never answered; screen %q", n, p.screen.String())
		}
		p.typeKeys(keys)
		time.Sleep(200 * time.Millisecond)
	}
}

// Keys typed before the question was on the screen never approve a
// write: not a y typed while moat starts (tool), nor one typed while the
// model is still answering (ask, chat), nor a second y typed at the
// first of two proposals (ask). Each proposal is then declined by the n
// typed once its question is shown.
func TestTypedAheadKeysDoNotApprove(t *testing.T) {
	if testing.Short() {
		t.Skip("runs moat on a pty, one process per command")
	}
	two := scripted.Script{Turns: []scripted.Turn{
		{DelayMS: 700, Calls: []scripted.Call{
			{Name: "propose_write", Args: []byte(`{"path":"a.txt","content":"a\n"}`)},
			{Name: "propose_write", Args: []byte(`{"path":"b.txt","content":"b\n"}`)},
		}},
		{Text: "Done."},
	}}
	notWritten := func(t *testing.T, root string, p *ptyChat) {
		t.Helper()
		for _, name := range []string{"a.txt", "b.txt"} {
			if _, err := os.Stat(filepath.Join(root, name)); err == nil {
				t.Errorf("%s was written by a key typed ahead; screen %q", name, p.screen.String())
			}
		}
	}

	t.Run("tool", func(t *testing.T) {
		root := t.TempDir()
		p := startMoatPty(t, nil, "tool", "--root", root, "propose_write", `{"path":"a.txt","content":"a\n"}`)
		p.typeKeys("y\n") // while moat starts, before any question
		p.answerAt(1, "n\n")
		p.exit()
		notWritten(t, root, p)
	})

	t.Run("ask", func(t *testing.T) {
		srv := scripted.Start(two)
		t.Cleanup(srv.Close)
		root := t.TempDir()
		p := startMoatPty(t, srv, "ask", "--root", root, "--model", "qwen3", "write them")
		p.typeKeys("y\n") // while the model is still answering
		p.answerAt(1, "n\ny\n")
		p.answerAt(2, "n\n")
		p.exit()
		notWritten(t, root, p)
	})

	t.Run("chat", func(t *testing.T) {
		srv := scripted.Start(two)
		t.Cleanup(srv.Close)
		root := t.TempDir()
		p := startMoatPty(t, srv, "chat", "--root", root, "--model", "qwen3")
		p.waitPrompts(1)
		p.typeKeys("write them\r")
		time.Sleep(150 * time.Millisecond)
		p.typeKeys("y\n") // while the model is still answering
		p.answerAt(1, "n\ny\n")
		p.answerAt(2, "n\n")
		p.waitPrompts(2)
		p.typeKeys("\x04")
		p.exit()
		notWritten(t, root, p)
	})
}
