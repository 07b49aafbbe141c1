//go:build !cgo

package isolate

import (
	"errors"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cgoLinked is false in a binary built without cgo.
const cgoLinked = false

// lockSandbox drops every capability and enforces the Landlock rule set
// (ll.fd, or none when it is -1) on every thread of this process, through
// Go's all-threads syscall: without cgo the runtime knows every thread,
// and no /proc is needed. exe, oldRoot, hello and env are the cgo build's
// (cgo_linux.go) and unused here.
func lockSandbox(exe, oldRoot int, ll ruleset, hello []byte, env []string) (landlockErr error, err error) {
	if err := dropCapsAllThreads(); err != nil {
		return nil, &StepError{Step: "drop capabilities", Err: err}
	}
	if ll.fd < 0 {
		return nil, nil
	}
	defer unix.Close(ll.fd)
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ll.fd), uintptr(ll.flags), 0); e != 0 {
		return e, nil
	}
	return nil, nil
}

// dropCapsAllThreads clears the ambient set, drops the whole bounding set
// (up to the kernel's last capability, where prctl says EINVAL: the view
// has no /proc/sys/kernel/cap_last_cap) and zeroes the inheritable,
// permitted and effective sets, on every thread, as bubblewrap does.
func dropCapsAllThreads() error {
	if _, _, e := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 && e != unix.EINVAL {
		return errors.New("clear ambient capabilities: " + e.Error())
	}
	for c := 0; c < 64; c++ {
		_, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0)
		if e == unix.EINVAL {
			break
		}
		if e != 0 {
			return errors.New("drop the bounding set: " + e.Error())
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return errors.New("capset: " + e.Error())
	}
	return nil
}

// lockedBefore is the cgo build's: without cgo there is no second image.
func lockedBefore() (landlockErr, err error) { return nil, errNotLocked }

// secondImage is the cgo build's: without cgo there is no second image.
func secondImage() (hello []byte, landlockReason string) { return nil, "" }

// lockHow says, for the doctor, how every thread was reached.
func lockHow() string { return "all threads via Go's all-threads syscall" }
