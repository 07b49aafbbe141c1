//go:build !linux

package confinetest

import (
	"os"
	"testing"
)

// AsUser runs fn with file permissions enforced as they are for an
// ordinary user; as root, where the permission checks do not hold, it
// skips the test (only Linux can step down and back here).
func AsUser(t testing.TB, fn func()) {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("running as root: mode-000 files are readable, and this system has no way to step down for the test")
	}
	fn()
}
