package tools

import (
	"errors"
	"io/fs"
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
	var ig *ignorer
	if !noIgnore {
		ig = newIgnorer(fsys, start)
		ig.notes = notes
	}
	return fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			notes.unreadable(p, err)
			return skipEntry(d)
		}
		if dl.expired() {
			notes.add("the time limit was reached before the whole tree was walked, so the results are incomplete; narrow the path or pattern")
			return fs.SkipAll
		}
		if p == start {
			if ig != nil {
				ig.enter(p)
			}
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
		if isDir && ig != nil {
			ig.enter(p)
		}
		return fn(p, d)
	})
}

// maxNotes bounds the notes one answer carries; the rest are counted.
const maxNotes = 5

// walkNotes collects what a walk could not do, shown after its results so
// the model knows the answer is incomplete and why. A nil *walkNotes
// discards them.
type walkNotes struct {
	list []string
	more int
}

// add records one note once.
func (n *walkNotes) add(s string) {
	if n == nil {
		return
	}
	for _, x := range n.list {
		if x == s {
			return
		}
	}
	if len(n.list) >= maxNotes {
		n.more++
		return
	}
	n.list = append(n.list, s)
}

// unreadable notes a folder the walk could not list. Folders the deny-list
// refuses are skipped silently: that is the policy working, not a gap in
// the search.
func (n *walkNotes) unreadable(p string, err error) {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EACCES) {
		return
	}
	why := bareError(err)
	if errors.Is(err, syscall.ENAMETOOLONG) {
		why = "its path is longer than the file system allows"
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

// write appends the notes, one a line, to b.
func (n *walkNotes) write(b *strings.Builder) {
	if n == nil {
		return
	}
	for _, s := range n.list {
		fmtTo(b, "[%s]\n", s)
	}
	if n.more > 0 {
		fmtTo(b, "[and %d more notes like these]\n", n.more)
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
	n       int
	expires bool
}

// newDeadline starts the clock of a call; nil when the host set no limit.
func newDeadline(lim proto.Limits) *deadline {
	if lim.TimeLimit <= 0 {
		return nil
	}
	limit := time.Duration(lim.TimeLimit)
	return &deadline{end: time.Now().Add(limit - deadlineMargin(limit))}
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
	d.expires = !time.Now().Before(d.end)
	return d.expires
}
