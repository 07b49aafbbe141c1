package guest_test

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest"
	"github.com/moatdev/moat/guest/wasmpack"
)

// TestWasmUpToDate rebuilds the guest exactly as `make guest` does and
// fails when the committed tools.wasm differs: the binary users run must
// be the source they read.
func TestWasmUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the guest; skipped in -short mode")
	}
	if runtime.GOOS == "wasip1" {
		t.Skip("needs the go command, which a WASI program cannot run")
	}
	want, err := os.ReadFile("toolchain.txt")
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(want)); v != runtime.Version() {
		t.Skipf("tools.wasm was built with %s and this is %s; a different Go produces different bytes (CI pins %s)", v, runtime.Version(), v)
	}
	out := filepath.Join(t.TempDir(), "tools.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", `-ldflags=-s -w`, "-o", out, "./cmd/moat-tools")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wasmpack.Pack(built, wasmpack.MaxGap) // make guest's second step
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, guest.Wasm()) {
		t.Fatalf("guest/tools.wasm is stale (%d bytes committed, %d built): run `make guest` and commit it", len(guest.Wasm()), len(got))
	}
}

func TestBuildID(t *testing.T) {
	id := guest.BuildID()
	// The Go linker's build ID: action ID and content ID hashes, joined by slashes.
	if len(id) < 20 || strings.Count(id, "/") != 3 || strings.ContainsAny(id, "\" \n") || strings.IndexByte(id, 0xff) >= 0 {
		t.Fatalf("BuildID() = %q", id)
	}
	if !bytes.Contains(guest.Wasm()[:200], []byte(id)) {
		t.Fatalf("BuildID() = %q is not in the module's first bytes", id)
	}
}

// TestReleaseWasmKeepsTheBytes: after ReleaseWasm the module reads the same
// (its pages come back from the executable), and a second release is as
// harmless.
func TestReleaseWasmKeepsTheBytes(t *testing.T) {
	before := sha256.Sum256(guest.Wasm())
	for range 2 {
		guest.ReleaseWasm()
		if after := sha256.Sum256(guest.Wasm()); after != before {
			t.Fatal("the module's bytes changed once released")
		}
	}
}
