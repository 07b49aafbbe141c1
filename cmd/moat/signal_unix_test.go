//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moatdev/moat/host/scripted"
)

// moatBinary is this test binary under the name "moat", which
// testscript.Main (TestMain) runs as the moat command.
func moatBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "moat")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Ctrl-C (SIGINT) stops ask with exit status 130, as shells report an
// interrupted command, and keeps what was printed. The signal is sent only
// once the model server has the request, so moat is surely waiting for
// the reply (and handling the signal) by then.
func TestInterruptExits130(t *testing.T) {
	srv := scripted.Start(scripted.Script{Turns: []scripted.Turn{{Text: "partial answer", Fail: "hang"}}})
	defer srv.Close()
	cmd := exec.Command(moatBinary(t), "ask", "--root", t.TempDir(), "--model", "qwen3", "Hi")
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+srv.URL, "MOAT_ISOLATE=off", "MOAT_CACHE_DIR="+sharedCache(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(srv.ChatRequests()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no chat request; stderr %q", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if c := cmd.ProcessState.ExitCode(); c != exitInterrupt {
		t.Errorf("exit status %d, want %d; stderr %q", c, exitInterrupt, stderr.String())
	}
	if !strings.Contains(stderr.String(), "moat: interrupted") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr %q, want one line saying it was interrupted", stderr.String())
	}
}
