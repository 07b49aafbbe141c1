package tools

import (
	"io"
	"io/fs"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"
)

// maxIgnoreFileBytes bounds how much of one .gitignore is read: real ones
// are a few KB, and a hostile multi-GB one must not exhaust the guest.
const maxIgnoreFileBytes = 1 << 20

// ignorer answers "would git ignore this path?" for a walk. Patterns in a
// nested .gitignore apply relative to its folder, so each file is kept with
// the folder it came from. A path is ignored when any .gitignore above it
// says so; a "!" re-include works within one file but cannot undo a parent
// folder's rule (simpler than git, and it errs towards showing less).
type ignorer struct {
	fsys  fs.FS
	rules map[string]*gitignore.GitIgnore // folder ("." for the root) -> its rules
}

// newIgnorer loads the .gitignore files of start's ancestors, which apply
// to everything the walk will visit. The walk itself adds the files it
// meets below start with enter.
func newIgnorer(fsys fs.FS, start string) *ignorer {
	ig := &ignorer{fsys: fsys, rules: map[string]*gitignore.GitIgnore{}}
	dir := start
	for {
		parent := parentDir(dir)
		if parent == dir {
			break
		}
		ig.enter(parent)
		dir = parent
	}
	return ig
}

// enter loads dir's .gitignore, if it has one. Unreadable or denied ignore
// files are treated as absent: they can only make the walk show more.
func (ig *ignorer) enter(dir string) {
	if _, ok := ig.rules[dir]; ok {
		return
	}
	name := joinPath(dir, ".gitignore")
	info, err := fs.Stat(ig.fsys, name)
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	f, err := ig.fsys.Open(name)
	if err != nil {
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
	if err != nil {
		return
	}
	ig.rules[dir] = gitignore.CompileIgnoreLines(strings.Split(string(data), "\n")...)
}

// ignored reports whether p (a root-relative path) is ignored. Folders are
// matched with a trailing slash so that "build/" rules apply to them.
func (ig *ignorer) ignored(p string, isDir bool) bool {
	if len(ig.rules) == 0 {
		return false
	}
	for dir := parentDir(p); ; dir = parentDir(dir) {
		if gi := ig.rules[dir]; gi != nil {
			rel := p
			if dir != "." {
				rel = p[len(dir)+1:]
			}
			if isDir {
				rel += "/"
			}
			if gi.MatchesPath(rel) {
				return true
			}
		}
		if dir == "." {
			return false
		}
	}
}

// parentDir is path.Dir for clean fs.FS paths, without allocating.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "."
	}
	return p[:i]
}
