//go:build unix

package confine

import (
	"io/fs"
	"os"
	"syscall"
)

// private reports whether this user owns fi's file and no one else can
// write it (the findings cache and its folder).
func private(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o022 == 0
}
