package tools

import (
	"io/fs"
	"slices"
	"strconv"
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
	f, err := runGlob(fsys, a, lim, newDealer(0, 1, "", nil))
	if err != nil {
		return "", err
	}
	return globAnswer(a, f.keep, f.total, f.notes.list, f.notes.more, f.notes.late), nil
}

// globShard is one shard of a glob split over several instances
// (proto.GlobShard): its share's matches, for MergeGlob, as JSON.
func globShard(fsys fs.FS, a proto.GlobShardArgs, lim proto.Limits) (string, error) {
	if a.Shards < 2 || a.Shard < 0 || a.Shard >= a.Shards {
		return "", errorf("invalid arguments for %s: shard %d of %d", proto.GlobShard, a.Shard, a.Shards)
	}
	f, err := runGlob(fsys, a.GlobArgs, lim, newDealer(a.Shard, a.Shards, "", nil))
	if err != nil {
		return "", err
	}
	r := proto.GlobShardResult{Matches: make([]string, len(f.keep)), Total: f.total, MoreNotes: f.notes.more, TimeUp: f.notes.late}
	for i, p := range f.keep {
		r.Matches[i] = strconv.Quote(p) // a name's bytes that are not UTF-8 would not survive JSON
	}
	for _, n := range f.notes.list {
		r.Notes = append(r.Notes, proto.GrepNote{At: n.at, Text: n.text})
	}
	return string(proto.AppendGlobShard(nil, &r)), nil
}

// MergeGlob merges the answers of a glob's shards (host/fanout) into the
// answer one instance gives: the first matches of all, sorted, and the
// count and notes of all.
func MergeGlob(args []byte, lim proto.Limits, shards []proto.GlobShardResult) proto.Response {
	var a proto.GlobArgs
	proto.DecodeArgs(args, &a) // the shards decoded the same bytes without error
	var keep []string
	total := 0
	notes := make([]shardNotes, len(shards))
	for i, r := range shards {
		for _, m := range r.Matches {
			if p, err := strconv.Unquote(m); err == nil {
				keep = append(keep, p)
			}
		}
		total += r.Total
		notes[i] = shardNotes{r.Notes, r.MoreNotes, r.TimeUp}
	}
	slices.Sort(keep)
	keep = keep[:min(len(keep), globLimit(lim))]
	list, more, late := mergeNotes(notes, "", false)
	return proto.Response{Text: globAnswer(a, keep, total, list, more, late)}
}

// globFound is what a glob's walk found: its first matches (sorted, at
// most the cap), how many in all, and the notes of the walk.
type globFound struct {
	keep  []string
	total int
	notes *walkNotes
}

// globLimit is the cap on the matches a glob shows.
func globLimit(lim proto.Limits) int {
	if lim.MaxResults <= 0 {
		return proto.DefaultMaxResults
	}
	return lim.MaxResults
}

// runGlob walks for a glob, only its share (deal) of the tree when the
// glob is split over several instances.
func runGlob(fsys fs.FS, a proto.GlobArgs, lim proto.Limits, deal dealer) (*globFound, error) {
	const tool = proto.Glob
	if err := checkGlob(a.Pattern); err != nil {
		return nil, err
	}
	start, err := cleanPath(a.Path)
	if err != nil {
		return nil, err
	}
	limit := globLimit(lim)
	info, err := fs.Stat(fsys, start)
	if err != nil {
		return nil, fsError(tool, a.Path, err)
	}
	if !info.IsDir() {
		return nil, errorf("not a folder: %s", displayPath(a.Path))
	}

	// Matches are kept sorted and cut to the cap every so often, so that a
	// pattern like "**" over a huge tree costs memory for the cap only;
	// beyond it they are just counted.
	f := &globFound{notes: &walkNotes{}}
	if deal.shards > 1 {
		f.notes.keep = maxShardNotes
	}
	// matchGlob's preparation of the pattern, done once, not per path.
	pat, dirPat := globPattern(a.Pattern), strings.HasSuffix(a.Pattern, "/")
	// The matches are sorted at the end, so the walk need not sort a
	// folder's files, and passes over those the name alone rules out.
	opts := walkOptions{noIgnore: lim.NoIgnore, anyOrder: true, skipIn: deal.skipIn(start, globFileFilter(pat))}
	err = walkTreeWith(fsys, start, opts, newDeadline(lim), f.notes, func(p string, d fs.DirEntry) error {
		isDir := d.IsDir()
		if isDir && deal.shards > 1 {
			// A folder above the units is walked by every shard and
			// reported by the first; a folder unit by its own shard.
			switch {
			case deal.unit(start, p) && !deal.mineDir(p):
				return fs.SkipDir
			case deal.shard != 0 && deal.splitDir(start, p):
				return nil
			}
		}
		// A file unit of another shard was left out of the listing.
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
		f.total++
		if isDir {
			p += "/"
		}
		f.keep = append(f.keep, p)
		if len(f.keep) > 2*limit {
			slices.Sort(f.keep)
			f.keep = slices.Delete(f.keep, limit, len(f.keep))
		}
		return nil
	})
	if err != nil {
		return nil, fsError(tool, a.Path, err)
	}
	slices.Sort(f.keep)
	if len(f.keep) > limit {
		f.keep = f.keep[:limit]
	}
	return f, nil
}

// globAnswer is a glob's answer: its first matches, sorted, how many more
// there are, and the walk's notes. A single glob and MergeGlob both answer
// through it, so they agree by construction.
func globAnswer(a proto.GlobArgs, keep []string, total int, notes []walkNote, moreNotes int, late string) string {
	var b strings.Builder
	if total == 0 {
		fmtTo(&b, "no files match %s in %s\n", a.Pattern, displayPath(a.Path))
	}
	for _, p := range keep {
		b.WriteString(quotePath(p))
		b.WriteByte('\n')
	}
	if total > len(keep) {
		fmtTo(&b, "... %d more matches\n", total-len(keep))
	}
	writeNotes(&b, notes, moreNotes, late)
	return strings.TrimSuffix(b.String(), "\n")
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
