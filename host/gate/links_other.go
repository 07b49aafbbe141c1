//go:build !unix

package gate

import "io/fs"

// linkCount cannot tell hard links apart here (fs.FileInfo does not carry a
// link count on this system), so it says so and the gate refuses to
// replace existing files: fail closed.
func linkCount(fs.FileInfo) (uint64, bool) { return 0, false }

// openNonblock is zero here: this system has no FIFOs an open could wait on
// (the type check after the open still refuses anything but a regular file).
const openNonblock = 0
