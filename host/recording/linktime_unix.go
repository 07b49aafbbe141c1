//go:build unix

package recording

import (
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
