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
// trailing "/". Symlinks are listed but never followed. Files git ignores
// are left out, so that with the deny-list aside it lists what
// `git ls-files -co --exclude-standard` lists (and the folders).
func glob(fsys fs.FS, a proto.GlobArgs, lim proto.Limits) (string, error) {
	const tool = proto.Glob
	if err := checkGlob(a.Pattern); err != nil {
		return "", err
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

	// Matches are kept sorted and cut to the cap every so often, so that a
	// pattern like "**" over a huge tree costs memory for the cap only;
	// beyond it they are just counted.
	var keep []string
	total := 0
	notes := &walkNotes{}
	// matchGlob's preparation of the pattern, done once, not per path.
	pat, dirPat := globPattern(a.Pattern), strings.HasSuffix(a.Pattern, "/")
	// The matches are sorted at the end, so the walk need not sort a
	// folder's files, and passes over those the name alone rules out.
	opts := walkOptions{noIgnore: lim.NoIgnore, anyOrder: true, skipIn: skipAll(globFileFilter(pat))}
	err = walkTreeWith(fsys, start, opts, newDeadline(lim), notes, func(p string, d fs.DirEntry) error {
		isDir := d.IsDir()
		rel := p
		if start != "." {
			rel = p[len(start)+1:]
		}
		if isDir && dirPat {
			rel += "/"
		}
		if ok, _ := doublestar.Match(pat, rel); !ok {
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
	var b strings.Builder
	if total == 0 {
		fmtTo(&b, "no files match %s in %s\n", a.Pattern, displayPath(a.Path))
	}
	slices.Sort(keep)
	if len(keep) > limit {
		keep = keep[:limit]
	}
	for _, p := range keep {
		b.WriteString(quotePath(p))
		b.WriteByte('\n')
	}
	if total > len(keep) {
		fmtTo(&b, "... %d more matches\n", total-len(keep))
	}
	notes.write(&b)
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// maxGlobAlternatives bounds how many patterns a glob's braces stand for.
// doublestar tries every alternative of every brace group in turn, so
// "{a,b}" forty times over is 2^40 attempts for each path: exponential
// work a model's argument must not be able to cause. Real patterns
// ("**/*.{ts,tsx}", "{src,test}/**/*.{c,h}") stand for a handful.
const maxGlobAlternatives = 256

// maxGlobBraceDepth bounds how deeply brace groups nest. doublestar scans
// the rest of the pattern again at every level of nesting, for every path
// it matches, so "{{{...a...}}}" 2,000 deep cost a second for each file
// and outran the call's deadline while standing for one pattern. Real
// patterns nest once or twice ("{a,{b,c}}").
const maxGlobBraceDepth = 10

// checkGlob rejects a pattern doublestar cannot parse, whose braces nest
// too deep or expand to too many patterns, with a message the model can
// act on. It is the one place a glob's cost is bounded: glob and grep's
// glob filter both call it before walking.
func checkGlob(pattern string) error {
	if !doublestar.ValidatePattern(pattern) {
		return errorf("invalid glob pattern: %s", pattern)
	}
	n, depth := braceShape(pattern, maxGlobAlternatives)
	if depth > maxGlobBraceDepth {
		return errorf("glob pattern nests {...} groups more than %d deep: %s; write the alternatives side by side or search in several calls", maxGlobBraceDepth, pattern)
	}
	if n > maxGlobAlternatives {
		return errorf("glob pattern has too many {...} alternatives (more than %d combinations): %s; use fewer brace groups or search in several calls", maxGlobAlternatives, pattern)
	}
	return nil
}

// braceAlternatives counts the patterns pattern's braces expand to,
// stopping early once the count exceeds limit.
func braceAlternatives(pattern string, limit int) int {
	n, _ := braceShape(pattern, limit)
	return n
}

// braceShape counts the patterns pattern's braces expand to, stopping
// early once the count exceeds limit, and measures how deep the groups
// nest, stopping once it exceeds maxGlobBraceDepth (so the count's
// recursion is bounded too). Brace groups multiply, alternatives within a
// group add, and braces nest; "\x" escapes and "[...]" classes are not
// braces.
func braceShape(pattern string, limit int) (count, depth int) {
	var s braceScan
	count, _ = s.sequence(pattern, 0, limit, 0)
	return count, s.depth
}

// braceScan is one scan of a pattern's braces; depth is the deepest
// nesting seen.
type braceScan struct{ depth int }

// sequence counts the sequence starting at i up to the end (or, inside a
// group, up to the "," or "}" that ends this alternative), returning the
// count and the index it stopped at. level is how many groups enclose it.
func (s *braceScan) sequence(p string, i, limit, level int) (int, int) {
	count := 1
	for i < len(p) {
		switch c := p[i]; {
		case c == '\\':
			i += 2
		case c == '[':
			j := i + 1
			if j < len(p) && (p[j] == '!' || p[j] == '^') {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				j++
			}
			i = j + 1
		case c == '{':
			s.depth = max(s.depth, level+1)
			if s.depth > maxGlobBraceDepth {
				return limit + 1, len(p) // too deep: no count is needed
			}
			sum := 0
			i++
			for {
				n, j := s.sequence(p, i, limit, level+1)
				sum = min(sum+n, limit+1)
				i = j
				if i >= len(p) || p[i] == '}' {
					i++
					break
				}
				i++ // the ","
			}
			count = min(count*sum, limit+1)
		case level > 0 && (c == ',' || c == '}'):
			return count, i
		default:
			i++
		}
	}
	return count, i
}

// globMatches matches a path relative to the glob's folder; a pattern that
// ends in "/" asks for folders and is matched against "rel/".
func globMatches(pattern, rel string, isDir bool) bool {
	if isDir && strings.HasSuffix(pattern, "/") {
		rel += "/"
	}
	return matchGlob(pattern, rel)
}

// matchGlob is doublestar.Match, except that a trailing "/**" matches one
// or more path components below, never zero: "**/test*/**" is what lies
// inside folders named test*, not a file named "testdata.go" (doublestar,
// like bash, lets the trailing "/**" match nothing; git's wildmatch does
// not). A pattern checkGlob would reject for its braces matches nothing.
func matchGlob(pattern, p string) bool {
	if n, depth := braceShape(pattern, maxGlobAlternatives); n > maxGlobAlternatives || depth > maxGlobBraceDepth {
		return false
	}
	ok, _ := doublestar.Match(globPattern(pattern), p)
	return ok
}

// globFileFilter is a test that passes over the files pattern (as
// globPattern makes it) can never match by their name alone: the name
// must begin with the literal text its last part begins with and end with
// the literal text the pattern ends with ("**/f0*.go": "f0" and ".go").
// Only text doublestar matches byte for byte counts: none when the
// pattern has braces or escapes, no beginning when a "[...]" class could
// hide a "/", and only ASCII (doublestar reads a name's invalid UTF-8 as
// U+FFFD). nil when nothing is known, so every file goes to doublestar.
// The test only ever rules out: what it passes is still matched in full.
func globFileFilter(pattern string) func(name string) bool {
	if strings.ContainsAny(pattern, `{}\`) || strings.HasSuffix(pattern, "/") {
		return nil
	}
	const meta = "*?[]"
	last := pattern[strings.LastIndexByte(pattern, '/')+1:]
	prefix := ""
	if !strings.Contains(pattern, "[") {
		i := strings.IndexAny(last, meta)
		if i < 0 {
			i = len(last)
		}
		prefix = last[:i]
	}
	suffix := last[strings.LastIndexAny(last, meta)+1:]
	if !isASCII(prefix) {
		prefix = ""
	}
	if !isASCII(suffix) {
		suffix = ""
	}
	if prefix == "" && suffix == "" {
		return nil
	}
	return func(name string) bool {
		return !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix)
	}
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// globPattern is the doublestar pattern matchGlob matches for pattern
// (checked by checkGlob).
func globPattern(pattern string) string {
	if strings.HasSuffix(pattern, "/**") && !strings.HasSuffix(pattern, `\/**`) {
		pattern += "/*"
	}
	return pattern
}
