//go:build unix

package gate

import (
	"io/fs"
	"syscall"
)

// linkCount returns the number of hard links to the file fi describes.
func linkCount(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}

// openNonblock is added to every open of a path the gate did not create:
// opening a FIFO swapped in after the check then returns at once instead
// of waiting for a writer (it has no effect on a regular file).
const openNonblock = syscall.O_NONBLOCK
