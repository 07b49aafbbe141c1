package tools

import (
	"errors"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
)

// walkTree visits the tree under start the way grep and glob search it:
// fs.WalkDir's order, never into .git, .gitignored files and folders left
// out (unless noIgnore), and two things fs.WalkDir does not do: a folder
// that cannot be read is skipped with a note (so a tree deeper than the
// path limit says what was not searched instead of dropping it silently),
// and the walk stops at the call's deadline with a note. fn sees every
// other entry below start (not start itself) and may return fs.SkipDir or
// fs.SkipAll.
func walkTree(fsys fs.FS, start string, noIgnore bool, dl *deadline, notes *walkNotes, fn func(p string, d fs.DirEntry) error) error {
	return walkTreeWith(fsys, start, walkOptions{noIgnore: noIgnore}, dl, notes, fn)
}

// walkOptions is how a walk may depart from fs.WalkDir's order for a
// caller that does not need it (glob sorts what it keeps).
type walkOptions struct {
	noIgnore bool // visit what .gitignore files leave out too
	// anyOrder lets fn see a folder's files (everything but its folders)
	// in the order the folder lists them, before its folders, which are
	// still visited in name order (so that the notes and where a deadline
	// stops stay the same from one run to the next). A folder's files are
	// then never sorted: in a tree of small folders that sort was a tenth
	// of the walk under wasm.
	anyOrder bool
	// skipIn, if set, gives for a folder (as the walk names it) the test
	// saying a file of that name in it can never be wanted, or nil: such a
	// file is left out of the folder's listing (wasifs.FS makes no entry
	// for it) and is never seen by fn, nor its ignore rules looked up. The
	// test sees names only, never folders'.
	skipIn func(dir string) func(name string) bool
	// listed, if set, is told each folder's entries (sorted walk only) as
	// the walk lists them, before it visits them, and skip, the test of
	// the files the walk passes over (nil: none).
	listed func(dir string, ents []fs.DirEntry, skip func(string) bool)
	// entered, if set, is told each folder the walk goes into, once it
	// is listed and before fn sees its entries, and whether the listing
	// may hold an ignore file (any name that is .gitignore but for case;
	// or the listing failed): an ignore file is always listed, skipIn or
	// not, so that a folder without one (most) needs no look for it.
	entered func(dir string, mayHoldIgnore bool)
}

// ignoreFileName is the name of the files whose rules a walk applies.
const ignoreFileName = ".gitignore"

// listSkip splits skip, a folder's skipIn test, for a walk with entered:
// list leaves out what skip rules out but an ignore file, and after is
// what the walk still passes over in a listing that left out what list
// rules out (the ignore file, if skip rules it out). Without entered, the
// listing leaves out all skip rules out.
func (opts walkOptions) listSkip(skip func(string) bool) (list, after func(string) bool) {
	if skip == nil || opts.entered == nil {
		return skip, nil
	}
	list = func(name string) bool { return !strings.EqualFold(name, ignoreFileName) && skip(name) }
	after = func(name string) bool { return strings.EqualFold(name, ignoreFileName) && skip(name) }
	return list, after
}

// tellEntered tells opts.entered, if set, that the walk goes into dir,
// listed as ents (err: the listing failed).
func (opts walkOptions) tellEntered(dir string, ents []fs.DirEntry, err error) {
	if opts.entered == nil {
		return
	}
	may := err != nil
	for _, e := range ents {
		if may {
			break
		}
		may = strings.EqualFold(e.Name(), ignoreFileName)
	}
	opts.entered(dir, may)
}

// skipAll is a walkOptions.skipIn of the same test in every folder.
func skipAll(skip func(name string) bool) func(string) func(string) bool {
	if skip == nil {
		return nil
	}
	return func(string) func(string) bool { return skip }
}

// skipFor is opts.skipIn's test for folder dir, or nil.
func (opts walkOptions) skipFor(dir string) func(string) bool {
	if opts.skipIn == nil {
		return nil
	}
	return opts.skipIn(dir)
}

// walkTreeWith is walkTree with the order and filter of opts.
func walkTreeWith(fsys fs.FS, start string, opts walkOptions, dl *deadline, notes *walkNotes, fn func(p string, d fs.DirEntry) error) error {
	noIgnore := opts.noIgnore
	var ig *ignorer
	if !noIgnore {
		ig = newIgnorer(fsys, start, notes)
	}
	if ig != nil {
		// A folder's .gitignore is read once the walk goes in (fn has
		// chosen to: a sharded grep skips other shards' folders without
		// reading theirs), and looked for only where its listing holds
		// one.
		opts.entered = ig.enter
	}
	return walkDir(fsys, start, opts, func(p string, d fs.DirEntry, err error) error {
		notes.walkAt(p)
		if err != nil {
			if p == start {
				return err
			}
			notes.unreadable(p, err)
			return skipEntry(d)
		}
		if dl.expired() {
			notes.timeUp(noteWalkTimeUp)
			return fs.SkipAll
		}
		if p == start {
			return nil
		}
		isDir := d.IsDir()
		if isDir && d.Name() == ".git" {
			return fs.SkipDir
		}
		if ig != nil && ig.ignored(p, isDir) {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		return fn(p, d)
	})
}

// walkDir is fs.WalkDir, call for call, but for how it names entries:
// fs.WalkDir's path.Join cleans every path it builds, which under wasm was
// a twentieth of a grep's guest time; a folder's path here is clean already
// and a listed name is one component, so joinPath's concatenation gives the
// same path (path.Join still takes any name that is not one component).
func walkDir(fsys fs.FS, root string, opts walkOptions, fn fs.WalkDirFunc) error {
	if path.Clean(root) != root {
		// Without opts (grep and glob always pass a clean root), but for
		// entered, told of every folder fn lets the walk go into, before
		// fs.WalkDir lists it.
		return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
			if err := fn(p, d, err); err != nil || d == nil || !d.IsDir() {
				return err
			}
			if err == nil && opts.entered != nil {
				opts.entered(p, true)
			}
			return nil
		})
	}
	info, err := fs.Stat(fsys, root)
	switch {
	case err != nil:
		err = fn(root, nil, err)
	case opts.anyOrder:
		err = walkDirAnyOrder(fsys, root, fs.FileInfoToDirEntry(info), fn, opts)
	default:
		err = walkDirFrom(fsys, root, fs.FileInfoToDirEntry(info), fn, opts)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// walkDirFrom is io/fs's walkDir with joinEntry for path.Join, and
// without the files opts.skipIn leaves out.
func walkDirFrom(fsys fs.FS, name string, d fs.DirEntry, fn fs.WalkDirFunc, opts walkOptions) error {
	var skip func(string) bool
	dirs, enter, err := visitDir(name, d, fn, func() (ents []fs.DirEntry, err error) {
		defer func() { opts.tellEntered(name, ents, err) }()
		if skip = opts.skipFor(name); skip != nil {
			list, after := opts.listSkip(skip)
			ents, left, err := readDirSkip(fsys, name, list)
			if left {
				skip = after // the listing holds none of the others
			}
			return ents, err
		}
		return fs.ReadDir(fsys, name)
	})
	if !enter {
		return err
	}
	if opts.listed != nil {
		opts.listed(name, dirs, skip)
	}
	for _, d1 := range dirs {
		if skip != nil && !d1.IsDir() && skip(d1.Name()) {
			continue // a file system that could not leave it out
		}
		if err := walkDirFrom(fsys, joinEntry(name, d1.Name()), d1, fn, opts); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// visitDir is fs.WalkDir's visit of one entry, for both walks: fn sees it,
// and a folder fn does not skip is listed with read, fn seeing the error
// of a listing that fails. enter says whether to go through the entries;
// if not, err is what the walk returns for this entry.
func visitDir(name string, d fs.DirEntry, fn fs.WalkDirFunc, read func() ([]fs.DirEntry, error)) (ents []fs.DirEntry, enter bool, err error) {
	if err := fn(name, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil // the folder was skipped
		}
		return nil, false, err
	}
	ents, err = read()
	if err != nil {
		// A second call, to report the listing's error.
		if err = fn(name, d, err); err != nil {
			if err == fs.SkipDir {
				err = nil
			}
			return nil, false, err
		}
	}
	return ents, true, nil
}

// walkDirAnyOrder is walkDirFrom for walkOptions.anyOrder: a folder's
// files first, as listed (those skip names are passed over), then its
// folders in name order. A file's fs.SkipDir skips the rest of its folder,
// as in fs.WalkDir.
func walkDirAnyOrder(fsys fs.FS, name string, d fs.DirEntry, fn fs.WalkDirFunc, opts walkOptions) error {
	var skip func(string) bool
	ents, enter, err := visitDir(name, d, fn, func() (ents []fs.DirEntry, err error) {
		defer func() { opts.tellEntered(name, ents, err) }()
		skip = opts.skipFor(name)
		list, after := opts.listSkip(skip)
		ents, left, err := readDirAnyOrder(fsys, name, list)
		if left {
			skip = after // the listing holds none of the others
		}
		return ents, err
	})
	if !enter {
		return err
	}
	dirs := 0
	for _, e := range ents {
		if e.IsDir() {
			ents[dirs] = e // the folders, kept at the front for the second pass
			dirs++
			continue
		}
		nm := e.Name()
		if skip != nil && skip(nm) {
			continue
		}
		if err := fn(joinEntry(name, nm), e, nil); err != nil {
			if err == fs.SkipDir {
				return nil
			}
			return err
		}
	}
	sub := ents[:dirs]
	slices.SortFunc(sub, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range sub {
		if err := walkDirAnyOrder(fsys, joinEntry(name, e.Name()), e, fn, opts); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// readDirAnyOrder lists a folder in its own order, without the files skip
// rules out (left) where the file system can (wasifs.FS.ReadDirAnyOrder),
// else as fs.ReadDir does, and then the walk applies skip.
func readDirAnyOrder(fsys fs.FS, name string, skip func(string) bool) (ents []fs.DirEntry, left bool, err error) {
	if a, ok := fsys.(interface {
		ReadDirAnyOrder(name string, skipFile func(string) bool) ([]fs.DirEntry, error)
	}); ok {
		ents, err = a.ReadDirAnyOrder(name, skip)
		return ents, true, err
	}
	ents, err = fs.ReadDir(fsys, name)
	return ents, false, err
}

// readDirSkip lists a folder sorted by name without the files skip rules
// out (left) where the file system can (wasifs.FS.ReadDirSkip), else as
// fs.ReadDir does, and then the walk applies skip.
func readDirSkip(fsys fs.FS, name string, skip func(string) bool) (ents []fs.DirEntry, left bool, err error) {
	if a, ok := fsys.(interface {
		ReadDirSkip(name string, skipFile func(string) bool) ([]fs.DirEntry, error)
	}); ok {
		ents, err = a.ReadDirSkip(name, skip)
		return ents, true, err
	}
	ents, err = fs.ReadDir(fsys, name)
	return ents, false, err
}

// joinEntry is path.Join(dir, name) for a clean dir, without cleaning
// again when name is one plain component (as listed names are).
func joinEntry(dir, name string) string {
	if name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 || dir == "" {
		return path.Join(dir, name)
	}
	return joinPath(dir, name)
}

// noteWalkTimeUp is the note of a walk stopped at its deadline.
const noteWalkTimeUp = "the time limit was reached before the whole tree was walked, so the results are incomplete; narrow the path or pattern"

// maxNotes bounds the notes one answer carries; the rest are counted.
const maxNotes = 5

// walkNotes collects what a walk could not do, shown after its results so
// the model knows the answer is incomplete and why. A nil *walkNotes
// discards them.
type walkNotes struct {
	list []walkNote
	more int // notes past keep, counted only
	// seen holds a hash of every note past keep, so that one arising
	// again (the ignore rules' step budget runs out path after path) is
	// counted once: the count is of different notes, and a sharded grep's
	// merge, which can only count different notes, gives the same.
	seen map[uint64]struct{}
	keep int    // how many notes are kept; 0 means maxNotes
	at   string // the path the walk is at: where a note added now arises
	// late is the note of a deadline reached, shown last whatever the
	// other notes: it says why everything after it is missing.
	late string
}

// walkNote is one note and the path of the walk where it arose (walkNotes.at):
// a sharded grep merges its shards' notes in walk order by it.
type walkNote struct {
	at, text string
}

// walkAt tells the notes where the walk is.
func (n *walkNotes) walkAt(p string) {
	if n != nil {
		n.at = p
	}
}

// add records one note once.
func (n *walkNotes) add(s string) {
	if n == nil {
		return
	}
	for _, x := range n.list {
		if x.text == s {
			return
		}
	}
	keep := n.keep
	if keep <= 0 {
		keep = maxNotes
	}
	if len(n.list) >= keep {
		h := fnv.New64a()
		h.Write([]byte(s))
		if _, ok := n.seen[h.Sum64()]; !ok {
			if n.seen == nil {
				n.seen = map[uint64]struct{}{}
			}
			n.seen[h.Sum64()] = struct{}{}
			n.more++
		}
		return
	}
	n.list = append(n.list, walkNote{at: n.at, text: s})
}

// timeUp records that the walk stopped at its deadline, with the note to show.
func (n *walkNotes) timeUp(s string) {
	if n != nil && n.late == "" {
		n.late = s
	}
}

// unreadable notes a folder the walk could not list. Folders the deny-list
// refuses are skipped silently: that is the policy working, not a gap in
// the search.
func (n *walkNotes) unreadable(p string, err error) {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EACCES) {
		return
	}
	why := bareError(err)
	switch {
	case errors.Is(err, syscall.ENAMETOOLONG):
		why = "its path is longer than the file system allows"
	case errors.Is(err, proto.ErrnoOSDenied):
		why = osDenied
	}
	shown := quotePath(p)
	if len(shown) > maxNotePath {
		// A path past the system's limit is thousands of bytes of "d/d/...":
		// its ends and its depth say enough.
		head, tail := maxNotePath/2, len(shown)-maxNotePath/2
		for head > 0 && !utf8.RuneStart(shown[head]) {
			head--
		}
		for tail < len(shown) && !utf8.RuneStart(shown[tail]) {
			tail++
		}
		shown = sprintf("%s…%s, %d levels deep", shown[:head], shown[tail:], strings.Count(p, "/")+1)
	}
	n.add(sprintf("not searched: the contents of %s (%s)", shown, why))
}

// maxNotePath is the longest path a note shows whole.
const maxNotePath = 160

// write appends the notes, one a line, to b: at most maxNotes of them
// (the rest counted), then the deadline's.
func (n *walkNotes) write(b *strings.Builder) {
	if n == nil {
		return
	}
	writeNotes(b, n.list, n.more, n.late)
}

// writeNotes appends notes as walkNotes.write does; more counts notes not
// in list.
func writeNotes(b *strings.Builder, list []walkNote, more int, late string) {
	if len(list) > maxNotes {
		more += len(list) - maxNotes
		list = list[:maxNotes]
	}
	for _, s := range list {
		fmtTo(b, "[%s]\n", s.text)
	}
	if more > 0 {
		fmtTo(b, "[and %d more notes like these]\n", more)
	}
	if late != "" {
		fmtTo(b, "[%s]\n", late)
	}
}

// deadlineCheckEvery is how many entries a walk visits between two looks
// at the clock: reading it is a host call, cheap but not free.
const deadlineCheckEvery = 64

// deadlineMargin is how long before the end of the call's time limit the
// guest stops and answers with what it has: a fifth of the limit, at most a
// second, so that its answer (with a note) reaches the host before the host
// gives up on it.
func deadlineMargin(limit time.Duration) time.Duration {
	return min(limit/5, time.Second)
}

// deadline is when a call's work must stop, from proto.Limits.TimeLimit.
// The host gives the guest a real monotonic clock for this (without it
// wazero's clock is fake and advances 1 ms a reading). A nil *deadline
// never expires.
type deadline struct {
	end     time.Time
	grace   time.Time // end plus half the margin: for finishing touches after end
	n       int
	expires bool
}

// newDeadline starts the clock of a call; nil when the host set no limit.
func newDeadline(lim proto.Limits) *deadline {
	if lim.TimeLimit <= 0 {
		return nil
	}
	limit := time.Duration(lim.TimeLimit)
	end := time.Now().Add(limit - deadlineMargin(limit))
	return &deadline{end: end, grace: end.Add(deadlineMargin(limit) / 2)}
}

// expired reports whether the deadline has passed, looking at the clock
// every deadlineCheckEvery calls; once passed it stays passed.
func (d *deadline) expired() bool {
	if d == nil {
		return false
	}
	if d.expires {
		return true
	}
	if d.n++; d.n%deadlineCheckEvery != 0 {
		return false
	}
	return d.passed()
}

// passed reports whether the deadline has passed, looking at the clock now:
// for work between two entries of a walk that may take long (grep reading
// a large file looks once a block).
func (d *deadline) passed() bool {
	if d == nil {
		return false
	}
	if !d.expires {
		d.expires = !time.Now().Before(d.end)
	}
	return d.expires
}

// graceLeft reports whether work that finishes an answer after the
// deadline (grep reading the rest of a file for NUL bytes) may go on:
// until half the margin before the host's own deadline is spent.
func (d *deadline) graceLeft() bool {
	return d == nil || time.Now().Before(d.grace)
}
