package tools

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/moatdev/moat/guest/proto"
)

// maxListEntries is list_dir's page (or the host's MaxResults, if larger): a
// folder of a thousand names is still readable by a model, a folder of a
// million (a cache, a mail spool) is not in one answer, and must not cost
// the guest its memory.
const maxListEntries = 1000

// readDirBatch is how many entries list_dir asks the filesystem for at a
// time, so that a very wide folder is never held in memory whole.
const readDirBatch = 1024

// listDir lists one folder, one entry a line, sorted, with the kind of
// every entry visible in its line so the model can pick its next call.
// A page is maxListEntries entries, or the host's MaxResults when that is
// larger: MaxResults (default 100) is sized for grep hits, and a model must
// see a whole ordinary folder in one call. A wider folder comes in pages:
// the answer says how many entries are left and the offset of the next
// page. A page at offset n keeps up to 2*(n+page) entries while it reads:
// the folder is listed again for each page, in name order, so pages join
// up without the guest holding anything between calls.
func listDir(fsys fs.FS, a proto.ListDirArgs, lim proto.Limits) (string, error) {
	const tool = proto.ListDir
	p, err := cleanPath(a.Path)
	if err != nil {
		return "", err
	}
	if a.Offset < 0 {
		return "", errorf("offset must be 1 or more, got %d", a.Offset)
	}
	skip := max(a.Offset, 1) - 1
	// Stat before opening: opening a FIFO for reading would block.
	info, err := fs.Stat(fsys, p)
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}
	if !info.IsDir() {
		return "", errorf("not a folder: %s", displayPath(a.Path))
	}
	if a.Depth < 0 {
		return "", errorf("depth must be 1 or more, got %d", a.Depth)
	}
	if a.Depth > 1 {
		return listTree(fsys, p, a, lim, skip)
	}
	limit := max(lim.MaxResults, maxListEntries)
	entries, total, err := smallestEntries(fsys, p, skip+limit)
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}
	if total == 0 {
		return "(empty folder)", nil
	}
	if skip >= total {
		return sprintf("(no entries from offset %d: the folder has %d)", skip+1, total), nil
	}
	entries = entries[skip:]
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(renderEntry(fsys, p, e))
		if a.Sizes {
			b.WriteString(entryDetails(fsys, joinPath(p, e.name), e.typ))
		}
		b.WriteByte('\n')
	}
	if rest := total - skip - len(entries); rest > 0 {
		fmtTo(&b, "... %d more entries\n", rest)
		fmtTo(&b, "[offset %d lists the next %d]\n", skip+len(entries)+1, min(rest, limit))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// listTree is list_dir with depth > 1: the entries of folder p and of
// its folders down to depth levels, each line the entry's path under p
// (sub/name, folders ending with "/"), in the order of a walk that lists
// each folder's entries sorted by name, a folder's entries after it. It
// walks as grep and glob do (walkTree: never into .git, .gitignored
// entries left out, links never followed, the deadline kept), and a page
// is list_dir's (maxListEntries, or MaxResults when larger); offset pages
// on, the tree walked again for each page.
func listTree(fsys fs.FS, p string, a proto.ListDirArgs, lim proto.Limits, skip int) (string, error) {
	limit := max(lim.MaxResults, maxListEntries)
	depth := min(a.Depth, proto.MaxListDepth)
	var b strings.Builder
	seen, shown, more := 0, 0, false
	notes := &walkNotes{}
	prefix := p + "/"
	err := walkTree(fsys, p, false, newDeadline(lim), notes, func(q string, d fs.DirEntry) error {
		rel := q
		if p != "." {
			rel = strings.TrimPrefix(q, prefix)
		}
		level := strings.Count(rel, "/") + 1
		if seen++; seen > skip {
			if shown == limit {
				more = true
				return fs.SkipAll
			}
			shown++
			b.WriteString(renderEntry(fsys, p, named{rel, d.Type()}))
			if a.Sizes {
				b.WriteString(entryDetails(fsys, q, d.Type()))
			}
			b.WriteByte('\n')
		}
		if d.IsDir() && level >= depth {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return "", fsError(proto.ListDir, a.Path, err)
	}
	switch {
	case seen == 0:
		b.WriteString("(empty folder)\n")
	case shown == 0:
		fmtTo(&b, "(no entries from offset %d: the tree has %d to depth %d)\n", skip+1, seen, depth)
	case more:
		fmtTo(&b, "... more entries: the tree is cut at %d entries a page\n", limit)
		fmtTo(&b, "[offset %d lists the next; or list a subfolder, or a smaller depth]\n", skip+shown+1)
	}
	notes.write(&b)
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// named is an entry of the page: its name and its type.
type named struct {
	name string
	typ  fs.FileMode
}

// smallestEntries returns the first limit entries of folder p in name order
// and how many entries it has in all. It keeps at most 2*limit entries, so
// memory depends on the cap, not on the folder's width; once it holds
// limit entries, one that sorts after all of them is only counted. The
// names it keeps are copied into one buffer, and the kept entries are
// offsets into it: a listing of 100,000 names held no pointer for the
// GC to mark, and sorting them moved no pointer through a write barrier
// (both had been a fifth of a wide folder's listing under wasm).
func smallestEntries(fsys fs.FS, p string, limit int) ([]named, int, error) {
	type kept struct {
		key      uint64 // the name's first 8 bytes, big-endian: most comparisons end here
		off, end uint32 // the name is names[off:end]
		typ      fs.FileMode
	}
	limit = max(limit, 1)
	var (
		names, spare []byte
		keep         []kept
		total        int
		bound        string // with bounded, no name from bound on is kept
		bounded      bool
	)
	nameOf := func(k kept) []byte { return names[k.off:k.end] }
	byName := func(x, y kept) int {
		if c := cmp.Compare(x.key, y.key); c != 0 {
			return c
		}
		return bytes.Compare(names[x.off:x.end], names[y.off:y.end])
	}
	err := scanDir(fsys, p, func(name string, typ fs.FileMode) {
		total++
		if bounded && name >= bound {
			return
		}
		off := len(names)
		names = append(names, name...)
		keep = append(keep, kept{proto.NameKey(name), uint32(off), uint32(len(names)), typ})
		if len(keep) < 2*limit {
			return
		}
		// Keep the limit smallest, their names moved to the spare buffer.
		slices.SortFunc(keep, byName)
		keep = keep[:limit]
		spare = spare[:0]
		for i, k := range keep {
			at := len(spare)
			spare = append(spare, nameOf(k)...)
			keep[i].off, keep[i].end = uint32(at), uint32(len(spare))
		}
		names, spare = spare, names
		bound, bounded = string(nameOf(keep[limit-1])), true
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(keep, byName)
	keep = keep[:min(len(keep), limit)]
	out := make([]named, len(keep))
	for i, k := range keep {
		out[i] = named{string(nameOf(k)), k.typ}
	}
	return out, total, nil
}

// scanDir calls fn with the name and type of every entry of folder p:
// through the filesystem's ScanDir if it has one (wasifs: straight from
// the listing's buffer, so fn must not keep name), else by ReadDir in
// batches of readDirBatch.
func scanDir(fsys fs.FS, p string, fn func(name string, typ fs.FileMode)) error {
	if s, ok := fsys.(interface {
		ScanDir(name string, fn func(name string, typ fs.FileMode)) error
	}); ok {
		return s.ScanDir(p, fn)
	}
	f, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	dir, ok := f.(fs.ReadDirFile)
	if !ok {
		return &fs.PathError{Op: "readdir", Path: p, Err: syscall.ENOTDIR}
	}
	for {
		batch, err := dir.ReadDir(readDirBatch)
		for _, e := range batch {
			fn(e.Name(), e.Type())
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// renderEntry shows one entry the way list_dir prints it: folders with a
// trailing slash, symlinks with their target, special files with their kind
// (so the model does not try to read a FIFO).
// Names (and link targets) that could forge a line are quoted (quotePath).
func renderEntry(fsys fs.FS, dir string, e named) string {
	name := e.name
	switch t := e.typ; {
	case t.IsDir():
		return quotePath(name + "/")
	case t&fs.ModeSymlink != 0:
		return quotePath(name) + " -> " + linkTarget(fsys, joinPath(dir, name))
	case t.IsRegular():
		return quotePath(name)
	default:
		return quotePath(name) + " (" + fileKind(t) + ")"
	}
}

// entryDetails is what sizes adds to an entry's line: "  (12 bytes,
// 2026-12-01T10:00:00Z)" for a regular file, "  (2026-12-01T10:00:00Z)"
// for anything else (a folder's or a link's own size says nothing of its
// content), from the entry's own Lstat, never its link's target.
func entryDetails(fsys fs.FS, p string, typ fs.FileMode) string {
	info, err := fs.Lstat(fsys, p)
	if err != nil {
		return "  (size unknown)"
	}
	when := info.ModTime().UTC().Format(time.RFC3339)
	if !typ.IsRegular() {
		return "  (" + when + ")"
	}
	return "  (" + humanBytes(info.Size()) + ", " + when + ")"
}

// humanBytes is a size as stat shows it: exact below 1000 bytes, with a
// rounded form above.
func humanBytes(n int64) string {
	if n < 1000 {
		return sprintf("%d bytes", n)
	}
	return sprintf("%d bytes, %s", n, humanSize(n))
}

// linkTarget is a symlink's text for display, or why it cannot be shown.
func linkTarget(fsys fs.FS, p string) string {
	target, err := fs.ReadLink(fsys, p)
	switch {
	case err == nil:
		return quotePath(target)
	case isEscape(err):
		return "(outside the sandbox)"
	default:
		return "(unreadable link)"
	}
}

// joinPath joins an fs.FS folder path and a name without path.Join's
// cleaning cost (both are already clean).
func joinPath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
