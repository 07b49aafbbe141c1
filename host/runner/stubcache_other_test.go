//go:build !linux

package runner_test

import "testing"

// readOnlySteps needs a mount namespace (stubcache_linux_test.go).
func readOnlySteps(t *testing.T, dir string) {
	t.Skip("a read-only mount of the cache needs Linux's mount namespaces")
}
