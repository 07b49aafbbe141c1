package proto

import (
	"io/fs"
	"syscall"
	"time"
)

// AttrsOf is fi's Attrs: its mode bits as Go makes them on Windows (read
// only or not), and from the attributes it was made of (fi.Sys) its
// access and creation times. Windows keeps no status-change time.
func AttrsOf(fi fs.FileInfo) Attrs {
	a := Attrs{Mode: ModeBits(fi.Mode()), Modified: fi.ModTime().UTC()}
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		a.Accessed = time.Unix(0, d.LastAccessTime.Nanoseconds()).UTC()
		a.Born = time.Unix(0, d.CreationTime.Nanoseconds()).UTC()
		a.Has = AttrAccessed | AttrBorn
	}
	return a
}
