package gate

import (
	"os"

	"golang.org/x/term"
)

// flushInput discards the keys typed at tty before the question was on
// the screen (tcflush TCIFLUSH), so that only a key pressed by someone who
// has seen the question answers it: a "y" typed ahead of a prompt, or
// typed twice at the one before, is thrown away, not taken as a yes. It
// reports whether it flushed: only a terminal can be, and a TTY that is
// not one (a test's buffer, a pipe) is left as it is.
func flushInput(tty TTY) bool {
	f, ok := tty.(*os.File)
	if !ok {
		return false
	}
	// Through SyscallConn, not f.Fd(), which would make the descriptor
	// blocking (see terminalSize).
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	flushed := false
	rc.Control(func(fd uintptr) {
		flushed = term.IsTerminal(int(fd)) && tcflushIn(int(fd)) == nil
	})
	return flushed
}
