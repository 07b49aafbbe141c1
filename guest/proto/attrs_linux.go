package proto

import (
	"io/fs"
	"syscall"
	"time"
)

// AttrsOf is fi's Attrs: its mode bits, and from the stat it was made of
// (fi.Sys, a *syscall.Stat_t) its access and status-change times. Linux's
// stat carries no birth time.
func AttrsOf(fi fs.FileInfo) Attrs {
	a := Attrs{Mode: ModeBits(fi.Mode()), Modified: fi.ModTime().UTC()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		a.Accessed = time.Unix(0, st.Atim.Nano()).UTC()
		a.Changed = time.Unix(0, st.Ctim.Nano()).UTC()
		a.Has = AttrAccessed | AttrChanged
	}
	return a
}
