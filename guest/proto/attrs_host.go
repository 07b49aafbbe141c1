//go:build !wasip1

package proto

import (
	"io/fs"
	"time"
)

// AttrsOf is fi's Attrs, as the host describes a file: its mode bits,
// its modification time, and the other times this system's stat keeps
// (sysTimes, from fi.Sys).
func AttrsOf(fi fs.FileInfo) Attrs {
	a := Attrs{Mode: ModeBits(fi.Mode()), Modified: fi.ModTime().UTC()}
	var accessed, changed, born int64
	accessed, changed, born, a.Has = sysTimes(fi.Sys())
	at := func(has uint32, ns int64) time.Time {
		if a.Has&has == 0 {
			return time.Time{}
		}
		return time.Unix(0, ns).UTC()
	}
	a.Accessed, a.Changed, a.Born = at(AttrAccessed, accessed), at(AttrChanged, changed), at(AttrBorn, born)
	return a
}
