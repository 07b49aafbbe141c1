//go:build unix

package confine

import "syscall"

// Open flags: never block on a FIFO, never follow a final symlink.
const (
	oNonblock = syscall.O_NONBLOCK
	oNofollow = syscall.O_NOFOLLOW
)
