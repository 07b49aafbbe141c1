//go:build !linux && !darwin && !freebsd && !netbsd && !windows && !wasip1

package proto

import "io/fs"

// AttrsOf is fi's Attrs: its mode bits and modification time, the times
// this system's stat keeps beside them not read here.
func AttrsOf(fi fs.FileInfo) Attrs {
	return Attrs{Mode: ModeBits(fi.Mode()), Modified: fi.ModTime().UTC()}
}
