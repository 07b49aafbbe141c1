//go:build !unix

package recording

import (
	"io/fs"
	"time"
)

// linkTime cannot set a link's own time here; stat's modified: line of a
// link then differs, and says so.
func linkTime(dir, rel string, t time.Time) error { return nil }

// makeSpecial cannot make a named pipe or a socket here: the replay
// lists it as missing, and says so.
func makeSpecial(dir, rel, kind string, mode fs.FileMode) error { return nil }
