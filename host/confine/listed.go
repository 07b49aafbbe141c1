package confine

import (
	"io/fs"
	"path"
	"strings"
	"sync"
)

// openListedFile opens, in one openat2 and one fstat, a regular file that
// this guest's own listing of its folder showed (a walk opens little
// else). What the walker's lstat before the open establishes is then
// known already:
//
//   - that no symlink is on the way, so the lexical path is the real one
//     and the deny-list check on it is exact: the resolver's open refuses
//     any symlink on the way (openat2 RESOLVE_NO_SYMLINKS, O_NOFOLLOW),
//     the lstat is only a second proof of it;
//   - that the file is regular, so that a FIFO or device is never opened:
//     the listing (getdents' d_type, or os's lstat where the file system
//     gives no type) said so.
//
// As after the walker's lstat, a file swapped for another between that
// check and the open is caught by the fstat of what was opened: anything
// but a regular file is closed and the walker decides (the race window is
// the one the walker has between its lstat and its open, only longer). A
// listed name serves one open; ok is false whenever the walker must decide.
func (f *FS) openListedFile(name string, seen *listing) (h handle, rel string, ok bool) {
	r, isBeneath := f.r.(interface {
		openBeneath(rel string) (handle, fs.FileInfo, error)
	})
	if seen == nil || !isBeneath || strings.IndexByte(name, 0) >= 0 || strings.Contains(name, "..") || strings.Contains(name, `\`) {
		return nil, "", false
	}
	rel = path.Clean(strings.TrimLeft(name, "/"))
	if _, denied := f.pol.Denied(rel); denied || !seen.take(rel) {
		return nil, "", false
	}
	h, fi, err := r.openBeneath(rel)
	if err != nil {
		return nil, "", false
	}
	if !fi.Mode().IsRegular() {
		h.Close()
		return nil, "", false
	}
	return h, rel, true
}

// listing holds the regular files one guest's folder listings showed and
// it has not opened yet, by canonical path. It is bounded: past maxListed
// names it starts over, and an open it forgot goes through the walker.
type listing struct {
	mu    sync.Mutex
	names map[string]struct{}
}

// maxListed bounds a listing's memory (about 100 bytes a name).
const maxListed = 1 << 16

func (l *listing) add(dir string, ents []fs.DirEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if len(l.names) >= maxListed || l.names == nil {
			l.names = make(map[string]struct{})
		}
		l.names[joinListed(dir, e.Name())] = struct{}{}
	}
}

// joinListed is path.Join(dir, name) for a canonical dir and a listed
// name: the listing's names are single components (getdents never gives a
// "/", and os drops "." and ".."), so only the root needs care, and
// path.Join's cleaning showed in a wide folder's listing.
func joinListed(dir, name string) string {
	if dir == "." || dir == "" {
		return path.Clean(name)
	}
	if name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return path.Join(dir, name)
	}
	return dir + "/" + name
}

// take reports whether rel was listed as a regular file, and forgets it.
func (l *listing) take(rel string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.names[rel]
	if ok {
		delete(l.names, rel)
	}
	return ok
}
