package isolate

// Landlock, the child's Linux security module layer: read-only access
// beneath the sandbox root and the compile cache and nothing else on the
// file system, no TCP bind or connect (ABI 4), and no abstract unix
// sockets or signals to anything outside the sandbox (ABI 6), each where
// the kernel has it. ARCHITECTURE.md places it among the layers.

import (
	"fmt"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// LandlockABI returns the kernel's Landlock ABI version, 0 when it has none,
// and the reason when it has none.
func LandlockABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, e
	}
	return int(v), nil
}

// landlockNeedsProc reports whether restricting every thread will go
// through libpsx, which finds the threads by listing /proc/PID/task: a
// binary with cgo (the default `go build` where a C compiler is present),
// on a kernel before ABI 8 (LANDLOCK_RESTRICT_SELF_TSYNC). Go's own
// all-threads syscall refuses to run in a cgo binary, because threads
// started by C code are invisible to it; psx tracks those too.
func landlockNeedsProc(abi int) bool { return cgoLinked && abi >= 1 && abi < 8 }

// landlockRestrict applies the rules on every thread of the process and
// says what it did, for the doctor and the tests. It never fails the
// setup: Landlock is an extra wall, never the only one.
//
// go-landlock's best-effort mode downgrades the V11 rule set to what the
// kernel knows, so each restriction below is in force exactly when the
// kernel's ABI has it; the text names them from the ABI.
func landlockRestrict(paths []string) string {
	abi, err := LandlockABI()
	if err != nil || abi < 1 {
		return fmt.Sprintf("not applied: the kernel has no Landlock (%v)", err)
	}
	read := landlock.AccessFSSet(llsys.AccessFSReadFile | llsys.AccessFSReadDir)
	// No network rules: every TCP (and, from ABI 10, UDP) bind and
	// connect is denied. Scoped: both IPC scopes.
	if err := landlock.V11.BestEffort().Restrict(landlock.PathAccess(read, paths...)); err != nil {
		return fmt.Sprintf("not applied: %v", err)
	}
	what := []string{"files read-only beneath " + strings.Join(paths, " and ")}
	if abi >= 4 {
		what = append(what, "TCP bind and connect denied")
	}
	if abi >= 6 {
		what = append(what, "abstract unix sockets and signals scoped to the sandbox")
	}
	how := "Go's all-threads syscall"
	switch {
	case abi >= 8:
		how = "LANDLOCK_RESTRICT_SELF_TSYNC"
	case cgoLinked:
		how = "libpsx, as this binary links cgo"
	}
	return fmt.Sprintf("applied (ABI %d, all threads via %s): %s", abi, how, strings.Join(what, "; "))
}
