package runner

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestBuildID: the build ID read from this program's ELF note is the one
// go tool buildid reads.
func TestBuildID(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the build ID is read from ELF")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if got, want := buildID(), strings.TrimSpace(string(out)); got == "" || got != want {
		t.Errorf("build ID %q, go tool buildid says %q", got, want)
	}
}
