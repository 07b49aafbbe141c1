//go:build cgo

package isolate

// In a binary built with cgo, Go will not run a system call on every
// thread (syscall.AllThreadsSyscall refuses: threads started by C code are
// invisible to it), and libpsx, which can, finds the threads by listing
// /proc, which the child has none of. Capabilities and Landlock are
// per-thread, so a cgo child takes them where only one thread exists: it
// re-executes itself once its mounts are made (lockSandbox), and the C
// constructor below, which runs before the Go runtime starts its first
// thread, moves into the view, drops every capability and enforces the
// Landlock rule set that the first image built. Every thread the runtime
// starts afterwards inherits all three from that one.

/*
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

// What the constructor did, for the Go side: ran is 1 when it was asked
// to lock this process; failed names the step that failed (the Go side
// then refuses to go on); landlock_errno is -1 when no rule set was given,
// 0 when it was enforced, else the errno.
static int moat_lock_ran;
static char moat_lock_failed[128];
static int moat_landlock_errno = -1;

static void moat_fail(const char *step) {
	snprintf(moat_lock_failed, sizeof moat_lock_failed, "%s: %s", step, strerror(errno));
}

__attribute__((constructor)) static void moat_lock(void) {
	// Only the sandbox child's second image, which is pid 1 of its own
	// PID namespace, is ever given the variable (reexecLocked).
	const char *spec = getenv("MOAT_SANDBOX_LOCK");
	int view, ruleset;
	unsigned flags;
	if (spec == NULL || getpid() != 1) {
		return;
	}
	moat_lock_ran = 1;
	if (sscanf(spec, "%d,%d,%u", &view, &ruleset, &flags) != 3) {
		errno = EINVAL;
		moat_fail("read MOAT_SANDBOX_LOCK");
		return;
	}
	// Back into the view: the first image chrooted into the detached
	// host tree only so that the dynamic loader could find its libraries.
	if (fchdir(view) != 0 || chroot(".") != 0 || chdir("/") != 0) {
		moat_fail("chroot into the view");
		return;
	}
	close(view);
	// Every capability, as bubblewrap drops them: ambient, bounding,
	// then inheritable, permitted and effective at once. The bounding
	// loop runs past the kernel's last capability (EINVAL) because
	// /proc/sys/kernel/cap_last_cap is not in the view.
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		moat_fail("clear ambient capabilities");
		return;
	}
	for (int cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
			moat_fail("drop the capability bounding set");
			return;
		}
	}
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) != 0) {
		moat_fail("drop capabilities");
		return;
	}
	if (ruleset >= 0) {
		moat_landlock_errno = syscall(SYS_landlock_restrict_self, ruleset, flags) == 0 ? 0 : errno;
		close(ruleset);
	}
}

static int moat_lock_state(char **failed, int *landlock_errno) {
	*failed = moat_lock_failed;
	*landlock_errno = moat_landlock_errno;
	return moat_lock_ran;
}
*/
import "C"

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cgoLinked is true in a binary built with cgo.
const cgoLinked = true

// What the first image hands the second: lockEnv, "view-fd,ruleset-fd,
// flags", for the C constructor; helloEnv, the parent's hello, already
// read from stdin; reasonEnv, why there is no rule set, when there is none.
const (
	lockEnv   = "MOAT_SANDBOX_LOCK"
	helloEnv  = "MOAT_SANDBOX_HELLO"
	reasonEnv = "MOAT_SANDBOX_LANDLOCK"
)

// lockedBefore reports, in the second image, what its constructor did:
// err when a step failed (the child must not go on), else landlockErr,
// the enforcement's own result (nil when enforced or when no rule set was
// given). In the first image it returns errNotLocked.
func lockedBefore() (landlockErr, err error) {
	var failed *C.char
	var llErrno C.int
	if C.moat_lock_state(&failed, &llErrno) == 0 {
		return nil, errNotLocked
	}
	if msg := C.GoString(failed); msg != "" {
		return nil, errors.New(msg)
	}
	if llErrno > 0 {
		return syscall.Errno(llErrno), nil
	}
	return nil, nil
}

// lockSandbox drops every capability and enforces the Landlock rule set
// (ll.fd, or none when it is -1) on every thread, by way of the second
// image: it opens the view's root and keeps it and the rule set across
// exec, chroots into the detached host tree held by oldRoot (the dynamic
// loader resolves its own path and the libraries' from the root), and
// executes this binary again through exe, the descriptor opened before
// pivot_root. It returns only on failure.
//
// The second image starts as root of the user namespace with every
// capability (execve gives them back); its constructor drops them, with
// the rest, before the Go runtime starts.
func lockSandbox(exe, oldRoot int, ll ruleset, hello []byte, env []string) (landlockErr error, err error) {
	if exe < 0 || oldRoot < 0 {
		return nil, &StepError{Step: "re-execute after setup", Err: errors.New("this binary or the host tree could not be held open before pivot_root")}
	}
	view, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY, 0) // no O_CLOEXEC: the constructor uses it
	if err != nil {
		return nil, &StepError{Step: "open the view", Err: err}
	}
	if ll.fd >= 0 {
		if _, err := unix.FcntlInt(uintptr(ll.fd), unix.F_SETFD, 0); err != nil {
			return nil, &StepError{Step: "keep the Landlock rule set", Err: err}
		}
	}
	if err := unix.Fchdir(oldRoot); err != nil {
		return nil, &StepError{Step: "chdir to the host tree", Err: err}
	}
	if err := unix.Chroot("."); err != nil {
		return nil, &StepError{Step: "chroot to the host tree", Err: err}
	}
	env = append(env[:len(env):len(env)],
		lockEnv+"="+strconv.Itoa(view)+","+strconv.Itoa(ll.fd)+","+strconv.FormatUint(uint64(ll.flags), 10),
		helloEnv+"="+string(hello), reasonEnv+"="+ll.reason)
	return nil, &StepError{Step: "re-execute after setup", Err: execveat(exe, []string{"moat", ChildArg}, env)}
}

// secondImage returns the hello the first image passed on and why it had
// no Landlock rule set, if so; hello is nil in the first image.
func secondImage() (hello []byte, landlockReason string) {
	h, ok := os.LookupEnv(helloEnv)
	if !ok {
		return nil, ""
	}
	landlockReason = os.Getenv(reasonEnv)
	for _, k := range []string{helloEnv, lockEnv, reasonEnv} {
		os.Unsetenv(k)
	}
	return []byte(h), landlockReason
}

// lockHow says, for the doctor, how every thread was reached.
func lockHow() string {
	return "all threads via a C constructor before the Go runtime starts, in the re-executed child"
}

// execveat executes the file open at fd (AT_EMPTY_PATH); it returns only
// on failure.
func execveat(fd int, argv, env []string) error {
	empty, err := unix.BytePtrFromString("")
	if err != nil {
		return err
	}
	av, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	ev, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&av[0])), uintptr(unsafe.Pointer(&ev[0])), unix.AT_EMPTY_PATH, 0)
	return e
}
