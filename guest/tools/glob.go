package tools

import (
	"io/fs"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/moatdev/moat/guest/proto"
)

// glob lists the files and folders under a folder whose path relative to
// it matches a doublestar pattern, root-relative and sorted, folders with a
// trailing "/". Symlinks are listed but never followed.
func glob(fsys fs.FS, a proto.GlobArgs, lim proto.Limits) (string, error) {
	const tool = proto.Glob
	if !doublestar.ValidatePattern(a.Pattern) {
		return "", errorf("invalid glob pattern: %s", a.Pattern)
	}
	start, err := cleanPath(a.Path)
	if err != nil {
		return "", err
	}
	limit := lim.MaxResults
	if limit <= 0 {
		limit = proto.DefaultMaxResults
	}
	info, err := fs.Stat(fsys, start)
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}
	if !info.IsDir() {
		return "", errorf("not a folder: %s", displayPath(a.Path))
	}

	var ig *ignorer
	if !lim.NoIgnore {
		ig = newIgnorer(fsys, start)
	}
	// Matches are kept sorted and cut to the cap every so often, so that a
	// pattern like "**" over a huge tree costs memory for the cap only;
	// beyond it they are just counted.
	var keep []string
	total := 0
	err = fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return skipEntry(d)
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
		rel := p
		if start != "." {
			rel = p[len(start)+1:]
		}
		if !globMatches(a.Pattern, rel, isDir) {
			return nil
		}
		total++
		if isDir {
			p += "/"
		}
		keep = append(keep, p)
		if len(keep) > 2*limit {
			slices.Sort(keep)
			keep = slices.Delete(keep, limit, len(keep))
		}
		return nil
	})
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}
	if total == 0 {
		return sprintf("no files match %s in %s", a.Pattern, displayPath(a.Path)), nil
	}
	slices.Sort(keep)
	if len(keep) > limit {
		keep = keep[:limit]
	}
	var b strings.Builder
	for _, p := range keep {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	if total > len(keep) {
		fmtTo(&b, "... %d more matches\n", total-len(keep))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// globMatches matches a path relative to the glob's folder; a pattern that
// ends in "/" asks for folders and is matched against "rel/".
func globMatches(pattern, rel string, isDir bool) bool {
	if isDir && strings.HasSuffix(pattern, "/") {
		rel += "/"
	}
	ok, _ := doublestar.Match(pattern, rel)
	return ok
}
