package runner_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/runner"
)

// hog builds testdata/hog, a guest that misbehaves on request.
func hog(t *testing.T) *runner.Module {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a wasm program; skipped in -short mode")
	}
	out := filepath.Join(t.TempDir(), "hog.wasm")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/hog")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the hostile guest: %v\n%s", err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runner.CompileWasm(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// TestHostileGuest: a guest that exhausts its memory gets a clear error
// naming the limit, and one that spins is cut off at the deadline; the
// runner survives both.
func TestHostileGuest(t *testing.T) {
	m := hog(t)
	r, err := runner.Open(m, runner.Config{Root: t.TempDir(), Timeout: time.Minute, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Exec(context.Background(), proto.Request{ID: 1, Tool: "memory"})
	if !errors.Is(err, runner.ErrOutOfMemory) {
		t.Fatalf("memory hog: err = %v, want ErrOutOfMemory", err)
	}
	r2, err := runner.Open(m, runner.Config{Root: t.TempDir(), Timeout: time.Second, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	_, err = r2.Exec(context.Background(), proto.Request{ID: 2, Tool: "spin"})
	if !errors.Is(err, runner.ErrTimeout) {
		t.Fatalf("spinning guest: err = %v, want ErrTimeout", err)
	}
}
