//go:build darwin || freebsd || netbsd

package proto

import (
	"io/fs"
	"syscall"
	"time"
)

// AttrsOf is fi's Attrs: its mode bits, and from the stat it was made of
// (fi.Sys, a *syscall.Stat_t) its access, status-change and birth times.
func AttrsOf(fi fs.FileInfo) Attrs {
	a := Attrs{Mode: ModeBits(fi.Mode()), Modified: fi.ModTime().UTC()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		a.Accessed = time.Unix(0, st.Atimespec.Nano()).UTC()
		a.Changed = time.Unix(0, st.Ctimespec.Nano()).UTC()
		a.Born = time.Unix(0, st.Birthtimespec.Nano()).UTC()
		a.Has = AttrAccessed | AttrChanged | AttrBorn
	}
	return a
}
