//go:build unix

package recording

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// linkTime sets the modification time of the link rel itself (not its
// target's) in dir, a folder Materialize just made: no component of rel
// but the last is a link.
func linkTime(dir, rel string, t time.Time) error {
	ts := unix.NsecToTimespec(t.UnixNano())
	return unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, filepath.FromSlash(rel)), []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

// makeSpecial makes a named pipe or a socket at rel in dir, a folder
// Materialize just made.
func makeSpecial(dir, rel, kind string, mode fs.FileMode) error {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	switch kind {
	case SpecialPipe:
		return unix.Mkfifo(p, uint32(mode.Perm()))
	case SpecialSocket:
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		// A path too long for a socket's address is left out: the
		// replay then says the listing changed.
		if len(p) >= 100 {
			return nil
		}
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: p}); err != nil {
			return fmt.Errorf("the socket %s: %w", rel, err)
		}
		return nil
	}
	return fmt.Errorf("%s: no special file of kind %q", rel, kind)
}
