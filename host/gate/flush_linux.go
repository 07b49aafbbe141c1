package gate

import "golang.org/x/sys/unix"

// tcflushIn discards what was typed at the terminal fd and not yet read:
// tcflush(fd, TCIFLUSH), which glibc implements as this ioctl.
func tcflushIn(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
