package isolate

// Landlock, the child's Linux security module layer: read-only access
// beneath the sandbox root and the compile cache and nothing else on the
// file system, no TCP bind or connect (ABI 4), and no abstract unix
// sockets or signals to anything outside the sandbox (ABI 6), each where
// the kernel has it. ARCHITECTURE.md places it among the layers.
//
// The rule set is built here, with go-landlock's best-effort downgrade to
// what the kernel knows; lockSandbox enforces it on every thread, in the
// way the build allows (nocgo_linux.go, cgo_linux.go). Neither way needs
// a /proc.

import (
	"errors"
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

// ruleset is a Landlock rule set ready to enforce: fd is -1 when there is
// none (no paths asked for, or no Landlock in the kernel), and then
// reason says why.
type ruleset struct {
	fd     int
	flags  uint32
	abi    int
	paths  []string
	reason string
}

// errNotLocked is lockedBefore's answer in a process its constructor did
// not lock.
var errNotLocked = errors.New("not the sandbox child's second image")

// landlockRuleset builds the rule set for paths (the child's view). It
// never fails the setup: Landlock is an extra wall, never the only one.
func landlockRuleset(paths []string) ruleset {
	rs := ruleset{fd: -1, paths: paths}
	if len(paths) == 0 {
		return rs
	}
	abi, err := LandlockABI()
	rs.abi = abi
	if err != nil || abi < 1 {
		rs.reason = fmt.Sprintf("not applied: the kernel has no Landlock (%v)", err)
		return rs
	}
	read := landlock.AccessFSSet(llsys.AccessFSReadFile | llsys.AccessFSReadDir)
	// No network rules: every TCP (and, from ABI 10, UDP) bind and
	// connect is denied. Scoped: both IPC scopes.
	fd, flags, err := landlock.V11.BestEffort().NewRulesetFD(landlock.PathAccess(read, paths...))
	if err != nil {
		rs.reason = fmt.Sprintf("not applied: %v", err)
		return rs
	}
	rs.fd, rs.flags = fd, flags
	return rs
}

// landlockState says what enforcing rs did, for the doctor and the tests:
// enforceErr is the enforcement's result.
func landlockState(rs ruleset, enforceErr error) string {
	switch {
	case len(rs.paths) == 0:
		return ""
	case rs.reason != "":
		return rs.reason
	case enforceErr != nil:
		return fmt.Sprintf("not applied: landlock_restrict_self: %s", errName(enforceErr))
	}
	what := []string{"files read-only beneath " + strings.Join(rs.paths, " and ")}
	if rs.abi >= 4 {
		what = append(what, "TCP bind and connect denied")
	}
	if rs.abi >= 6 {
		what = append(what, "abstract unix sockets and signals scoped to the sandbox")
	}
	return fmt.Sprintf("applied (ABI %d, %s): %s", rs.abi, lockHow(), strings.Join(what, "; "))
}
