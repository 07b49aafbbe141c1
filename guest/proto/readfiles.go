package proto

import (
	"errors"
	"io"
	"strings"
)

// The batch read the guest's host function moat.read_files makes
// (host/runner): a folder's path, then names one after another each ended
// by a NUL, a buffer the host reads the files into back to back, and one
// int32 a name for what it read of it. These are its rules, for the host
// and for the guest's native stand-in (guest/wasifs) alike.

// NotRead is a name's size when the host did not read the file: the
// guest opens it itself, and that open says why (a denial, not a regular
// file, too large for what was left of the buffer, an error).
const NotRead = -1

// EntryName reports whether name can name an entry of a folder: not empty,
// "." or "..", with no "/" and no NUL. The host refuses a backslash too
// where the system reads it as a separator.
func EntryName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// ErrNoEnd says a file filled the buffer without ending: it grew after
// its size was taken, or the buffer left was smaller than it.
var ErrNoEnd = errors.New("the file did not end within the buffer")

// ReadWhole reads r to its end into b: the file's bytes, or ErrNoEnd if
// it does not end within b.
func ReadWhole(r io.Reader, b []byte) (int, error) {
	n := 0
	for {
		if n == len(b) {
			return n, ErrNoEnd
		}
		m, err := r.Read(b[n:])
		n += m
		switch {
		case err == io.EOF:
			return n, nil
		case err != nil:
			return n, err
		case m == 0:
			return n, io.ErrNoProgress
		}
	}
}
