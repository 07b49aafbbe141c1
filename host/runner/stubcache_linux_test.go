package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/host/runner"
)

// readOnlyEnv names the cache folder the test binary, started again by
// TestStubCacheReadOnly in a mount namespace of its own, mounts read-only
// and compiles the guest through.
const readOnlyEnv = "MOAT_TEST_STUB_CACHE_READ_ONLY"

// TestStubCacheReadOnly: where the cache is mounted read-only (as the
// isolated child sees it), a warm stub cache loads, and a cold one is
// passed by without a file written: the guest is loaded from wazero's own
// cache instead, and answers either way.
func TestStubCacheReadOnly(t *testing.T) {
	if dir := os.Getenv(readOnlyEnv); dir != "" {
		readOnlyChild(t, dir)
		return
	}
	dir := t.TempDir()
	compileInto(t, dir)
	if got := inReadOnlyMount(t, dir); got != "stubbed answered" {
		t.Fatalf("warm, read-only: %q, want the guest loaded through the stub cache", got)
	}
	// Cold for the stub cache: its file moved out of it.
	filed := codeFiles(t, runner.StubsDir(dir))
	if len(filed) != 1 {
		t.Fatalf("the stub cache holds %q", filed)
	}
	if err := os.Rename(filed[0], filepath.Join(dir, "aside")); err != nil {
		t.Fatal(err)
	}
	before := codeFiles(t, runner.StubsDir(dir))
	if got := inReadOnlyMount(t, dir); got != "compiled answered" {
		t.Fatalf("cold, read-only: %q, want the guest loaded from wazero's cache", got)
	}
	if after := codeFiles(t, runner.StubsDir(dir)); !slices.Equal(before, after) {
		t.Fatalf("a read-only load changed the stub cache: %q, was %q", after, before)
	}
}

// inReadOnlyMount runs the test binary again in a mount namespace of its
// own (and a user namespace when not root), where readOnlyChild mounts
// dir read-only, and returns what it printed.
func inReadOnlyMount(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStubCacheReadOnly$", "-test.v")
	cmd.Env = append(os.Environ(), readOnlyEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if os.Geteuid() != 0 && strings.Contains(err.Error(), "operation not permitted") {
			t.Skipf("no user namespace for a read-only mount here: %v", err)
		}
		t.Fatalf("%v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "stub cache: "); ok {
			return s
		}
	}
	t.Fatalf("no answer from the read-only child:\n%s", out)
	return ""
}

// readOnlyChild is TestStubCacheReadOnly in the namespace: it mounts dir
// read-only onto itself (a mount no other namespace sees), compiles the
// guest through it and prints how it was loaded and whether it answered.
func readOnlyChild(t *testing.T, dir string) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err == nil {
		t.Fatal("the mount is writable")
	}
	m, err := runner.Compile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	listsRoot(t, m)
	how := "compiled"
	if runner.Stubbed(m) {
		how = "stubbed"
	}
	fmt.Printf("stub cache: %s answered\n", how)
}
