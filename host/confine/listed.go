package confine

import (
	"hash/maphash"
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
//   - that no symlink is on the way, so the lexical path is the real one:
//     the resolver's open refuses any symlink on the way (openat2
//     RESOLVE_NO_SYMLINKS, O_NOFOLLOW), the lstat is only a second proof
//     of it;
//   - that the deny-list allows it: the listing holds only the names its
//     folder showed (file_.ReadDir keeps the denied ones back, with
//     Policy.DeniedChild), and the folder, opened by its real path, was
//     allowed; so the path is not asked about again (a full check of it
//     was 2% of a grep's time);
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
	if !seen.take(rel) {
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
// it has not opened yet, folder by folder. A folder's names are kept back
// to back in one buffer, with no string or map entry per name (a listing
// of 100,000 files held 5 MiB as strings and a map, and the GC scanned
// every one of them), and indexed when the guest first opens one of them,
// so that a walk that opens nothing (glob, list_dir) pays no insert per
// file. It is bounded (maxListed), and an open it forgot goes through the
// walker.
type listing struct {
	mu   sync.Mutex
	seed maphash.Seed
	dirs map[string]*listedDir // by canonical folder path
	held int                   // names held and not taken, in every folder
	off  bool                  // listings are not remembered (enable)
}

// enable turns remembering on or off; off forgets every folder.
func (l *listing) enable(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.off = !on
	if l.off {
		l.dirs, l.held = nil, 0
	}
}

// listedDir is one folder's listed regular files: their names back to
// back in names (name i ends at ends[i]), and once indexed, an open
// addressed table of them. A slot holds a name's number plus one (0 is an
// empty slot), with slotTaken set once that name was opened.
type listedDir struct {
	names []byte
	ends  []uint32
	slots []uint32 // nil until indexed
	left  int      // names not taken (distinct ones, once indexed)
}

const slotTaken = 1 << 31

// maxListed bounds a listing's memory (about 25 bytes a name with its
// index, for names of ten bytes). A walk that opens nothing (glob) keeps
// every name it lists until the bound, so the bound is what it costs.
// Past it, the names of every other folder are forgotten, so that the
// folder being listed is kept whole up to maxListedFolder names: a grep
// opens that folder's files next, and a folder of 100,000 files forgotten
// halfway sent 35,000 opens through the walker.
const (
	maxListed       = 1 << 16
	maxListedFolder = 1 << 18
)

// add records the regular files of ents, listed in folder dir (its real
// path). ents must hold only what the deny-list lets the guest see: a
// name taken from the listing is opened without asking the policy again.
func (l *listing) add(dir string, ents []fs.DirEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.off {
		return
	}
	if l.dirs == nil {
		l.dirs = make(map[string]*listedDir)
		l.seed = maphash.MakeSeed()
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
		if l.held >= maxListed && len(l.dirs) > 1 {
			for k, o := range l.dirs {
				if o != d {
					l.held -= o.left
					delete(l.dirs, k)
				}
			}
		}
		if len(d.ends) >= maxListedFolder {
			return // the rest of a folder this large goes through the walker
		}
		l.held += d.add(l.seed, e.Name())
	}
}

// add appends name and, once the folder is indexed, indexes it (a name
// listed again after it was taken may be taken again, as it could be
// opened again). It returns how many names it added to those not taken.
func (d *listedDir) add(seed maphash.Seed, name string) int {
	if d.slots == nil {
		d.names = append(d.names, name...)
		d.ends = append(d.ends, uint32(len(d.names)))
		d.left++
		return 1
	}
	if s, ok := d.find(seed, name); ok {
		if d.slots[s]&slotTaken == 0 {
			return 0
		}
		d.slots[s] &^= slotTaken
		d.left++
		return 1
	}
	d.names = append(d.names, name...)
	d.ends = append(d.ends, uint32(len(d.names)))
	if 2*len(d.ends) > len(d.slots) {
		d.index(seed) // counts the new name in left
		return 1
	}
	s, _ := d.find(seed, name)
	d.slots[s] = uint32(len(d.ends))
	d.left++
	return 1
}

// name is name number i.
func (d *listedDir) name(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = d.ends[i-1]
	}
	return d.names[start:d.ends[i]]
}

// index (re)builds the table at under half full. A name listed twice is
// indexed once; the copies left out are no longer counted in left.
func (d *listedDir) index(seed maphash.Seed) {
	taken := make(map[int]bool)
	for _, v := range d.slots {
		if v&slotTaken != 0 {
			taken[int(v&^slotTaken)-1] = true
		}
	}
	size := 16
	for size < 2*len(d.ends)+1 {
		size *= 2
	}
	d.slots = make([]uint32, size)
	distinct := 0
	for i := range d.ends {
		s, found := d.find(seed, string(d.name(i)))
		if found {
			continue
		}
		v := uint32(i + 1)
		if taken[i] {
			v |= slotTaken
		} else {
			distinct++
		}
		d.slots[s] = v
	}
	d.left = distinct
}

// find is the slot of name, or the empty slot where it would go.
func (d *listedDir) find(seed maphash.Seed, name string) (int, bool) {
	mask := len(d.slots) - 1
	for s := int(maphash.String(seed, name)) & mask; ; s = (s + 1) & mask {
		v := d.slots[s]
		if v == 0 {
			return s, false
		}
		if string(d.name(int(v&^slotTaken)-1)) == name {
			return s, true
		}
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
	if d.slots == nil {
		before := d.left
		d.index(l.seed)
		l.held -= before - d.left
	}
	s, ok := d.find(l.seed, name)
	if !ok || d.slots[s]&slotTaken != 0 {
		return false
	}
	d.slots[s] |= slotTaken
	d.left--
	l.held--
	if d.left == 0 {
		delete(l.dirs, dir)
	}
	return true
}
