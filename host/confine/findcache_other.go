//go:build !unix

package confine

import "io/fs"

// private is false where moat cannot read a file's owner: there the
// findings cache is never trusted, and so never kept.
func private(fs.FileInfo) bool { return false }
