package tools

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"

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
		b.WriteByte('\n')
	}
	if rest := total - skip - len(entries); rest > 0 {
		fmtTo(&b, "... %d more entries\n", rest)
		fmtTo(&b, "[offset %d lists the next %d]\n", skip+len(entries)+1, min(rest, limit))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// named is a listed entry kept for the page: its name (read once: sorting
// and comparing a hundred thousand entries through fs.DirEntry's Name
// method showed in a wide folder's listing) and its type. It holds no
// fs.DirEntry: wasifs makes a batch's entries in one slice and their names
// in one string, so one kept entry held its whole batch, and the kept
// entries of a wide folder held every batch (6 MB for 100,000 entries),
// which the GC then marked again and again.
type named struct {
	name string
	typ  fs.FileMode
}

// smallestEntries returns the first limit entries of folder p in name order
// and how many entries it has in all. It reads the folder in batches and
// keeps at most 2*limit entries, so memory depends on the cap, not on the
// folder's width; once it holds limit entries, one that sorts after all of
// them is only counted.
func smallestEntries(fsys fs.FS, p string, limit int) ([]named, int, error) {
	byName := func(x, y named) int { return strings.Compare(x.name, y.name) }
	f, err := fsys.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	dir, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, 0, &fs.PathError{Op: "readdir", Path: p, Err: syscall.ENOTDIR}
	}
	var keep []named
	total := 0
	bound, bounded := "", false // with bounded, no entry from bound on is kept
	for {
		batch, err := dir.ReadDir(readDirBatch)
		total += len(batch)
		for _, e := range batch {
			if n := e.Name(); !bounded || n < bound {
				keep = append(keep, named{strings.Clone(n), e.Type()})
			}
		}
		if len(keep) >= 2*limit {
			slices.SortFunc(keep, byName)
			clear(keep[limit:])
			keep = keep[:limit]
			bound, bounded = keep[limit-1].name, true
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	slices.SortFunc(keep, byName)
	return keep[:min(len(keep), limit)], total, nil
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
