package isolate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/runner"
)

// The lock the child takes once its mounts are made (capabilities,
// Landlock) and the session keyring, each shown by the attack it stops.

// assertLandlock holds the report to Landlock wherever the kernel has it:
// applied, on every thread at once, and, with network, refusing TCP bind
// and connect itself (EACCES) from ABI 4.
func assertLandlock(t *testing.T, rep *Report, network bool) {
	t.Helper()
	abi, err := LandlockABI()
	if err != nil || abi < 1 {
		return // the kernel has none: nothing more to hold it to
	}
	if !strings.HasPrefix(rep.Landlock, "applied") {
		t.Errorf("the kernel has Landlock but the child did not apply it: %s", rep.Landlock)
	}
	threads := false
	for _, p := range rep.Probes {
		if strings.HasPrefix(p.Name, "landlock: list / from") {
			threads = true
			if p.Detail != fmt.Sprintf("EACCES on %d of %d threads", probeThreads, probeThreads) {
				t.Errorf("Landlock did not reach every thread: %s", p.Detail)
			}
		}
		if !network || abi < 4 {
			continue
		}
		if p.Name == "bind tcp *:8080" && p.Detail != "EACCES" {
			t.Errorf("TCP bind: %s, want Landlock's EACCES", p.Detail)
		}
		if strings.HasPrefix(p.Name, "connect ") && !strings.Contains(p.Detail, "EACCES") {
			t.Errorf("TCP connect refused with %s, not by Landlock's network rule (EACCES)", p.Detail)
		}
	}
	if !threads {
		t.Errorf("the every-thread Landlock probe did not run")
	}
}

// TestLocksWithoutSeccomp switches the seccomp filter off, so that the
// layers beneath it answer for themselves: Landlock refuses the listing
// of / on every thread and TCP bind and connect, and without any
// capability the owner's mode 000 file stays unreadable.
func TestLocksWithoutSeccomp(t *testing.T) {
	needUserns(t)
	root, _, _ := sandboxWithEscapes(t)
	rep, err := check(context.Background(), runner.Config{Root: root, Resolver: confine.Unconfined},
		probeSpec{Read: []string{InsideRoot + "/mode000"}}, func(p *Plan) { p.Seccomp = false })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Filter != "" || rep.Seccomp != 0 {
		t.Fatalf("seccomp is on: %s, %d threads", rep.Filter, rep.Seccomp)
	}
	if rep.Threads == 0 || rep.NoCaps != rep.Threads {
		t.Errorf("no capability on %d of %d threads; one holds %s", rep.NoCaps, rep.Threads, rep.CapsSeen)
	}
	for _, p := range rep.Probes {
		if p.Name == "read "+InsideRoot+"/mode000" && p.Detail != "EACCES" {
			t.Errorf("%s: %s, want EACCES", p.Name, p.Detail)
		}
		// Root of the user namespace would hold CAP_NET_RAW in its own
		// network namespace; without it the socket is refused.
		if p.Name == "socket AF_PACKET" && p.Detail != "EPERM" {
			t.Errorf("%s: %s, want EPERM", p.Name, p.Detail)
		}
	}
	t.Logf("landlock: %s; probes: %+v", rep.Landlock, rep.Probes)
	assertLandlock(t, rep, true)
}

// TestLandlockWithoutProc runs TestCheck and TestLocksWithoutSeccomp again
// where no procfs can be mounted: in a mount namespace whose /proc has a
// file masked the way container runtimes mask /proc/kcore and
// /proc/timer_list (a bind of /dev/null over it), which makes the kernel refuse every new procfs in
// the namespaces below. Landlock must still be applied, on every thread.
func TestLandlockWithoutProc(t *testing.T) {
	if os.Getenv("MOAT_ISOLATE_MASKED_PROC") == "1" {
		t.Skip("already the masked run")
	}
	needUserns(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1) to mask /proc")
	}
	if abi, err := LandlockABI(); err != nil || abi < 1 {
		t.Skip("the kernel has no Landlock")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Docker masks these (and more) with /dev/null; one is enough.
	const mask = `for f in /proc/kcore /proc/timer_list /proc/keys; do [ -e $f ] && mount --bind /dev/null $f && break; done`
	// A new procfs is refused there: shown before the child is asked.
	probe := exec.Command("unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
		mask+` && unshare --user --map-root-user --mount --pid --fork sh -c 'mkdir -p /tmp/moat-proc-probe; mount -t proc proc /tmp/moat-proc-probe && echo mounted || echo refused'`)
	out, err := probe.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "refused") {
		t.Skipf("cannot build a namespace that refuses a procfs here: %v: %s", err, out)
	}
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
		mask+` && exec "$0" -test.run='^(TestCheck|TestLocksWithoutSeccomp)$' -test.v`, exe)
	cmd.Env = append(os.Environ(), "MOAT_ISOLATE_MASKED_PROC=1")
	out, err = cmd.CombinedOutput()
	t.Logf("with /proc/kcore masked:\n%s", out)
	if err != nil {
		t.Fatalf("masked run failed: %v", err)
	}
	for _, name := range []string{"TestCheck", "TestLocksWithoutSeccomp"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("%s did not pass with /proc masked", name)
		}
	}
}

// TestKeyringFresh puts a key in this process's session keyring, as a
// login or a tool caching a token does, and shows the child has a keyring
// of its own, empty, and cannot call keyctl, add_key or request_key. The
// key is added in a re-executed copy of this test, forked from a thread
// that joined a keyring of its own, so the test's own keyring is untouched.
func TestKeyringFresh(t *testing.T) {
	needUserns(t)
	if os.Getenv("MOAT_ISOLATE_KEYRING") == "1" {
		mine, err := sessionKeyringID()
		if err != nil {
			t.Fatal(err)
		}
		if n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, mine, nil, 0); err != nil || n < 4 {
			t.Fatalf("the test's session keyring %d holds no key (%d bytes, %v)", mine, n, err)
		}
		rep, err := check(context.Background(), runner.Config{Root: t.TempDir(), Resolver: confine.Unconfined}, probeSpec{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(rep.Keyring, "fresh: ") {
			t.Errorf("the child's session keyring: %s", rep.Keyring)
		}
		for _, p := range rep.Probes {
			if strings.Contains(p.Name, "key") && (!p.Blocked || p.Detail != "ENOSYS") {
				t.Errorf("probe %q: %s, want ENOSYS", p.Name, p.Detail)
			}
		}
		t.Logf("keyring: %s", rep.Keyring)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread's keyring dies with it
		if err := joinFreshKeyring(); err != nil {
			out <- "join: " + err.Error()
			return
		}
		if _, err := unix.AddKey("user", "moat-test-token", []byte("moat-keyring-secret"), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			out <- "add_key: " + err.Error()
			return
		}
		cmd := exec.Command(exe, "-test.run=^TestKeyringFresh$", "-test.v")
		cmd.Env = append(os.Environ(), "MOAT_ISOLATE_KEYRING=1")
		b, err := cmd.CombinedOutput()
		out <- fmt.Sprintf("%s\n(%v)", b, err)
	}()
	got := <-out
	t.Logf("with a key in the session keyring:\n%s", got)
	if strings.HasPrefix(got, "join: ") || strings.HasPrefix(got, "add_key: ") {
		t.Skipf("keyrings are unavailable here: %s", got)
	}
	if !strings.Contains(got, "--- PASS: TestKeyringFresh") {
		t.Errorf("the child was not given a fresh keyring")
	}
}
