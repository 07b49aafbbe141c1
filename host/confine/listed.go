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
// it has not opened yet, folder by folder. A listing only keeps the names
// (os made them already); a folder's names are indexed when the guest
// first opens one of them, so that a walk that opens nothing (glob,
// list_dir) pays no map insert per file, which was a seventh of a glob's
// time over a large tree. It is bounded (maxListed), and an open it
// forgot goes through the walker.
type listing struct {
	mu   sync.Mutex
	dirs map[string]*listedDir // by canonical folder path
	held int                   // names held, indexed or not
}

// listedDir is one folder's listed regular files not yet opened: names
// as listed, and once indexed, the set of them.
type listedDir struct {
	names []string
	set   map[string]struct{}
}

// maxListed bounds a listing's memory (about 50 bytes a name, more once
// indexed). A walk that opens nothing (glob) keeps every name it lists
// until the bound, so the bound is what it costs. Past it, the names of
// every other folder are forgotten, so that the folder being listed is
// kept whole up to maxListedFolder names: a grep opens that folder's
// files next, and a folder of 100,000 files forgotten halfway sent
// 35,000 opens through the walker.
const (
	maxListed       = 1 << 16
	maxListedFolder = 1 << 18
)

func (l *listing) add(dir string, ents []fs.DirEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dirs == nil {
		l.dirs = make(map[string]*listedDir)
	}
	d := l.dirs[dir]
	if d == nil {
		d = &listedDir{}
		l.dirs[dir] = d
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if l.held >= maxListed {
			for k, o := range l.dirs {
				if o != d {
					l.held -= len(o.names) + len(o.set)
					delete(l.dirs, k)
				}
			}
		}
		if len(d.names)+len(d.set) >= maxListedFolder {
			return // the rest of a folder this large goes through the walker
		}
		if d.set != nil {
			d.set[e.Name()] = struct{}{}
		} else {
			d.names = append(d.names, e.Name())
		}
		l.held++
	}
}

// take reports whether rel was listed as a regular file, and forgets it.
func (l *listing) take(rel string) bool {
	dir, name := ".", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dirs[dir]
	if d == nil {
		return false
	}
	if d.set == nil {
		d.set = make(map[string]struct{}, len(d.names))
		for _, n := range d.names {
			d.set[n] = struct{}{}
		}
		d.names = nil
	}
	if _, ok := d.set[name]; !ok {
		return false
	}
	delete(d.set, name)
	l.held--
	if len(d.set) == 0 {
		delete(l.dirs, dir)
	}
	return true
}
