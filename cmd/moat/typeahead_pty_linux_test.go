package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moatdev/moat/host/fakellm"
)

// startMoatPty runs the moat binary (this test binary under the name
// moat) with a pty as its controlling terminal, stdin, stdout and
// stderr, as a person runs it. The gate's typed-ahead keys are not kept
// (MOAT_TEST_TYPEAHEAD is unset).
func startMoatPty(t *testing.T, srv *fakellm.Server, args ...string) *ptyChat {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, bin+"/moat"); err != nil { // testscript.Main runs "moat" by that name
		t.Fatal(err)
	}
	master, slave := openPty(t)
	t.Cleanup(func() { master.Close() })
	cmd := exec.Command(bin+"/moat", args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MOAT_TEST_TYPEAHEAD=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "MOAT_ISOLATE=off", "MOAT_CACHE_DIR="+sharedCache(t), "TERM=dumb",
		"XDG_STATE_HOME="+t.TempDir()) // saved sessions, never the real user's
	if srv != nil {
		cmd.Env = append(cmd.Env, "OLLAMA_HOST="+srv.URL)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	p := &ptyChat{t: t, master: master, code: make(chan int, 1), srv: srv}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			p.screen.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		p.code <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
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
	two := fakellm.Script{Turns: []fakellm.Turn{
		{DelayMS: 700, Calls: []fakellm.Call{
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
		srv := fakellm.Start(two)
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
		srv := fakellm.Start(two)
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
