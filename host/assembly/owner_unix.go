//go:build unix

package assembly

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether this user owns the file.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
