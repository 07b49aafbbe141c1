//go:build unix

package confine

import "syscall"

// Open flags: never block on a FIFO, never follow a final symlink.
const (
	oNonblock = syscall.O_NONBLOCK
	oNofollow = syscall.O_NOFOLLOW
)

// backslashSeparates is false: on Unix a backslash is a plain character
// of a name ("a\b.txt" is one file), as the kernel reads it.
const backslashSeparates = false
