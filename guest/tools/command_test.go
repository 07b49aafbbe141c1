package tools

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// command finds the program a differential test compares with (rg, git).
// why is the reason to skip when it cannot be run: under wasip1 (make
// test-guest) no program can be started at all, whatever is installed,
// and the comparison is the native run's (make test-lib); elsewhere, the
// program is not installed.
func command(name, what string) (path, why string) {
	if runtime.GOOS == "wasip1" {
		return "", "the WASI guest cannot start programs (wasip1 has no processes), so " + what + " runs in the native test run (make test-lib), not here"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", name + " is not installed: " + what + " needs it"
	}
	return path, ""
}

// The reason a differential test skips is the true one: under wasip1 that
// no program can start (not that rg or git is missing, which make
// test-guest's summary once said eleven times).
func TestCommandSkipReason(t *testing.T) {
	for _, name := range []string{"rg", "git", "no-such-program-moat"} {
		path, why := command(name, "the comparison")
		switch {
		case runtime.GOOS == "wasip1":
			if path != "" || !strings.Contains(why, "the WASI guest cannot start programs") || strings.Contains(why, "not installed") {
				t.Errorf("under wasip1, command(%q) = %q, %q; want the guest's reason", name, path, why)
			}
		case name == "no-such-program-moat":
			if path != "" || why != "no-such-program-moat is not installed: the comparison needs it" {
				t.Errorf("command(%q) = %q, %q; want not installed", name, path, why)
			}
		case (path == "") == (why == ""):
			t.Errorf("command(%q) = %q, %q; want a path or a reason", name, path, why)
		}
	}
}
