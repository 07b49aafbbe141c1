package confinetest

import (
	"os"
	"syscall"
	"testing"
)

// Nobody is the uid and gid AsUser runs as when the tests run as root.
const Nobody = 65534

// AsUser runs fn with file permissions enforced as they are for an
// ordinary user. As root (CAP_DAC_OVERRIDE reads a mode-000 file) the
// whole process's effective uid and gid become Nobody for the duration,
// and are restored after: the saved uid stays 0, which is what allows
// that. Files fn touches must be reachable by that user through folders
// already open or mode 0755. Tests that call it must not run in parallel.
func AsUser(t testing.TB, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		fn()
		return
	}
	if err := syscall.Setresgid(-1, Nobody, -1); err != nil {
		t.Skipf("cannot take gid %d to test file permissions as root: %v", Nobody, err)
	}
	defer func() {
		if err := syscall.Setresgid(-1, 0, -1); err != nil {
			panic("confinetest: restoring gid 0: " + err.Error())
		}
	}()
	if err := syscall.Setresuid(-1, Nobody, -1); err != nil {
		t.Skipf("cannot take uid %d to test file permissions as root: %v", Nobody, err)
	}
	defer func() {
		if err := syscall.Setresuid(-1, 0, -1); err != nil {
			panic("confinetest: restoring uid 0: " + err.Error())
		}
	}()
	fn()
}
