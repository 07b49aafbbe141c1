//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package gate

import "golang.org/x/sys/unix"

// tcflushIn discards what was typed at the terminal fd and not yet read:
// tcflush(fd, TCIFLUSH), which the BSDs' libc implements as TIOCFLUSH
// with FREAD.
func tcflushIn(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) }
