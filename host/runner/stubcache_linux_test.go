package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/runner"
)

// readOnlyEnv names the cache folder the test binary, started again by
// readOnlySteps in a mount namespace of its own, mounts read-only and
// compiles the guest through.
const readOnlyEnv = "MOAT_TEST_STUB_CACHE_READ_ONLY"

// TestMain runs readOnlyChild instead of the tests when the test binary
// is started again by inReadOnlyMount.
func TestMain(m *testing.M) {
	if dir := os.Getenv(readOnlyEnv); dir != "" {
		if err := readOnlyChild(dir); err != nil {
			fmt.Println("stub cache:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// readOnlySteps: where the cache is mounted read-only (as the isolated
// child sees it), a warm stub cache loads; and one without the guest's
// file is passed by without a file written, the guest loaded from
// wazero's own cache instead; the guest answers either way. The file is
// put back after.
func readOnlySteps(t *testing.T, dir string) {
	if got := inReadOnlyMount(t, dir); got != "stubbed answered" {
		t.Fatalf("warm, read-only: %q, want the guest loaded through the stub cache", got)
	}
	filed := codeFiles(t, runner.StubsDir(dir))
	if len(filed) != 1 {
		t.Fatalf("the stub cache holds %q", filed)
	}
	aside := filepath.Join(dir, "aside")
	if err := os.Rename(filed[0], aside); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(aside, filed[0])
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
	cmd := exec.Command(os.Args[0])
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

// readOnlyChild runs in the namespace: it mounts dir read-only onto
// itself (a mount no other namespace sees), compiles the guest through
// it and prints how it was loaded and whether it answered.
func readOnlyChild(dir string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return err
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err == nil {
		return errors.New("the mount is writable")
	}
	ctx := context.Background()
	m, err := runner.Compile(ctx, dir)
	if err != nil {
		return err
	}
	defer m.Close(ctx)
	root, err := os.MkdirTemp("", "moat-stub-root-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "only.txt"), []byte("x\n"), 0o644)
	r, err := runner.Open(m, runner.Config{Root: root})
	if err != nil {
		return err
	}
	defer r.Close()
	resp, err := r.Exec(ctx, proto.Request{ID: 1, Tool: proto.ListDir, Args: []byte(`{"path":"."}`)})
	if err != nil || resp.IsError || !strings.Contains(resp.Text, "only.txt") {
		return fmt.Errorf("the guest's listing: %q, %v", resp.Text, err)
	}
	how := "compiled"
	if runner.Stubbed(m) {
		how = "stubbed"
	}
	fmt.Printf("stub cache: %s answered\n", how)
	return nil
}
