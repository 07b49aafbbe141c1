package tools

import (
	"io"
	"io/fs"
	"strings"
)

// The matcher below follows gitignore(5) and git's dir.c rather than a
// library: github.com/sabhiram/go-gitignore (used before) got negation,
// anchoring and nested files wrong, and go-git's plumbing/format/gitignore
// matches each path component with filepath.Match, which has no "[!...]",
// treats escapes differently from git's wildmatch, and pulls go-billy into
// the guest. The rules of git are short enough to port exactly
// (wildmatch.go), and TestIgnoreAgainstGit compares the result with git
// itself over random trees and rule sets.

// Bounds on what ignore files may cost. Real .gitignore files are a few KB
// and a few hundred rules; a hostile one (megabytes of wildcard rules) must
// not make every search slow or run the guest out of memory. Rules past a
// bound are not applied, and the walk's notes say so: the search goes on,
// showing at worst files that git would hide.
const (
	maxIgnoreFileBytes  = 256 << 10 // read of one .gitignore
	maxIgnoreFileRules  = 10000     // rules taken from one file
	maxIgnoreTotalRules = 50000     // rules loaded over one walk
	maxIgnoreRuleBytes  = 4096      // one rule (PATH_MAX: no longer path exists)
)

// ignoreRule is one line of a .gitignore, parsed as git's
// parse_path_pattern does.
type ignoreRule struct {
	pattern  string // without "!", the trailing "/" and an anchoring leading "/"
	negate   bool   // "!": re-include
	dirOnly  bool   // trailing "/": matches folders only
	basename bool   // no "/" in it: matches the name at any depth below
	literal  bool   // no wildcard: compare, do not match
	// The literal text before the first and after the last wildcard: a
	// name that does not start and end with them cannot match, and most
	// names fail there without running wildmatch (git's "prefix" check).
	prefix, suffix string
	endsWith       bool // "*literal" for a name: the suffix decides (git's ENDSWITH)
	dead           bool // too costly to match (wildSteps): no longer applied
}

// ignoreFile is the rules of one .gitignore and the folder it is in.
type ignoreFile struct {
	rules []ignoreRule
}

// ignorer answers "would git ignore this path?" for a walk, as git does for
// `git ls-files -o --exclude-standard`: the .gitignore files of the path's
// folders are consulted deepest first, the last matching rule of the first
// file that has one decides, and a "!" rule re-includes. A file inside an
// ignored folder cannot be re-included, because the walk never enters that
// folder (git does the same). .git/info/exclude and core.excludesFile are
// not read: the guest cannot see .git, and the user's global config is
// outside the root.
type ignorer struct {
	fsys  fs.FS
	rules map[string]*ignoreFile // folder ("." for the root) -> its rules
	total int                    // rules loaded so far
	notes *walkNotes
	// chainDir's ignore files, deepest first: a walk asks about every
	// entry of a folder in turn, and looking each of its ancestors up in
	// rules for every entry was most of a wide tree's walk.
	chainDir string
	chain    []dirRules
	chained  bool // chain is chainDir's
}

// dirRules is one folder's ignore file in a chain.
type dirRules struct {
	dir string
	f   *ignoreFile
}

// newIgnorer loads the .gitignore files of start's ancestors, which apply
// to everything the walk will visit. The walk itself adds the files it
// meets below start with enter. notes (which may be nil) collects what
// could not be applied, the ancestors' files' included.
func newIgnorer(fsys fs.FS, start string, notes *walkNotes) *ignorer {
	ig := &ignorer{fsys: fsys, rules: map[string]*ignoreFile{}, notes: notes}
	dir := start
	for {
		parent := parentDir(dir)
		if parent == dir {
			break
		}
		ig.enter(parent, true)
		dir = parent
	}
	return ig
}

// note records one thing the ignorer could not do.
func (ig *ignorer) note(format string, args ...any) {
	if ig.notes != nil {
		ig.notes.add(sprintf(format, args...))
	}
}

// enter loads dir's .gitignore, if it has one; look false says it has
// none (its listing holds none), so it is not looked for. Unreadable or
// denied ignore files are treated as absent: they can only make the walk
// show more.
func (ig *ignorer) enter(dir string, look bool) {
	if _, ok := ig.rules[dir]; ok {
		return
	}
	ig.rules[dir] = nil
	ig.chained = false // a folder's rules may change any chain below it
	if !look {
		return
	}
	name := joinPath(dir, ignoreFileName)
	info, err := fs.Stat(ig.fsys, name)
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	f, err := ig.fsys.Open(name)
	if err != nil {
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes+1))
	if err != nil {
		return
	}
	if len(data) > maxIgnoreFileBytes {
		data = data[:maxIgnoreFileBytes]
		if i := strings.LastIndexByte(string(data), '\n'); i >= 0 {
			data = data[:i+1]
		}
		ig.note("%s is larger than %d KiB: only its first %d KiB of rules were applied", quotePath(name), maxIgnoreFileBytes>>10, maxIgnoreFileBytes>>10)
	}
	rules, skipped := parseIgnore(string(data), min(maxIgnoreFileRules, maxIgnoreTotalRules-ig.total))
	if skipped > 0 {
		ig.note("%d rules of %s were not applied (too many or too long ignore rules)", skipped, quotePath(name))
	}
	ig.total += len(rules)
	if len(rules) > 0 {
		ig.rules[dir] = &ignoreFile{rules: rules}
	}
}

// parseIgnore parses a .gitignore's text as git's add_patterns_from_buffer
// does, keeping at most max rules; skipped counts the rules left out.
func parseIgnore(text string, max int) (rules []ignoreRule, skipped int) {
	text = strings.TrimPrefix(text, "\ufeff") // git skips a UTF-8 BOM
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimSuffix(line, "\r")
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i] // git reads each line as a C string
		}
		if line == "" || line[0] == '#' {
			continue
		}
		line = trimTrailingSpaces(line)
		r, ok := parseRule(line)
		if !ok {
			continue
		}
		if len(rules) >= max || len(line) > maxIgnoreRuleBytes {
			skipped++
			continue
		}
		rules = append(rules, r)
	}
	return rules, skipped
}

// trimTrailingSpaces is git's trim_trailing_spaces: unescaped trailing
// spaces (not tabs) go; "\ " keeps the space.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// parseRule is git's parse_path_pattern. ok is false for a rule that can
// never match (empty after its "!" and "/" are taken off).
func parseRule(s string) (ignoreRule, bool) {
	var r ignoreRule
	if strings.HasPrefix(s, "!") {
		r.negate = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		r.dirOnly = true
		s = s[:len(s)-1]
	}
	r.basename = strings.IndexByte(s, '/') < 0
	if !r.basename {
		// A slash at the start or in the middle anchors the rule to the
		// .gitignore's folder; the leading one is not part of the match.
		s = strings.TrimPrefix(s, "/")
	}
	r.pattern = s
	first := strings.IndexAny(s, "*?[\\")
	r.literal = first < 0
	if !r.literal {
		r.prefix = s[:first]
		// A suffix's leading "/" may belong to a "**/" that matches
		// nothing ("**/x" matches "x"), so it is not required.
		r.suffix = strings.TrimPrefix(s[strings.LastIndexAny(s, "*?[]\\")+1:], "/")
		r.endsWith = r.basename && first == 0 && s[0] == '*' && len(r.suffix) == len(s)-1
	}
	return r, s != ""
}

// ignorePathSteps bounds the wildmatch steps spent on one path over all
// the rules that apply to it, so that thousands of costly rules cannot make
// each path take seconds. A path that runs out is treated as not ignored,
// with a note.
const ignorePathSteps = 1 << 20

// ignored reports whether p (a root-relative path, whose parent folders
// the walk has entered and found not ignored) is ignored.
func (ig *ignorer) ignored(p string, isDir bool) bool {
	if ig.total == 0 {
		return false
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	budget := ignorePathSteps
	for _, c := range ig.chainOf(parentDir(p)) {
		rel := p
		if c.dir != "." {
			rel = p[len(c.dir)+1:]
		}
		for i := len(c.f.rules) - 1; i >= 0; i-- {
			r := &c.f.rules[i]
			if r.dead || r.dirOnly && !isDir {
				continue
			}
			if budget <= 0 {
				ig.note("the .gitignore rules took too long to match against some paths; those were searched as if not ignored")
				return false
			}
			name := rel
			if r.basename {
				name = base
			}
			if ig.matchRule(r, name, c.dir, &budget) {
				return !r.negate
			}
		}
	}
	return false
}

// chainOf is the ignore files that apply in folder dir, deepest first.
func (ig *ignorer) chainOf(dir string) []dirRules {
	if ig.chained && ig.chainDir == dir {
		return ig.chain
	}
	ig.chain = ig.chain[:0]
	for d := dir; ; d = parentDir(d) {
		if f := ig.rules[d]; f != nil {
			ig.chain = append(ig.chain, dirRules{d, f})
		}
		if d == "." {
			break
		}
	}
	ig.chainDir, ig.chained = dir, true
	return ig.chain
}

// matchRule matches one rule against name (the base name, or the path
// relative to the rule's folder), spending steps from budget. A rule that
// runs out of steps is not applied again, with a note.
func (ig *ignorer) matchRule(r *ignoreRule, name, dir string, budget *int) bool {
	if r.literal {
		return r.pattern == name
	}
	if !strings.HasPrefix(name, r.prefix) || !strings.HasSuffix(name, r.suffix) {
		return false
	}
	if r.endsWith {
		return true // "*.log" and a name that ends in ".log"
	}
	limit := min(wildSteps, *budget)
	matched, steps := wildmatch(r.pattern, name, limit)
	*budget -= steps
	if steps > limit {
		if limit == wildSteps {
			r.dead = true
			ig.note("the ignore rule %s in %s is too costly to match and was not applied", quotePath(r.pattern), quotePath(joinPath(dir, ignoreFileName)))
		}
		return false
	}
	return matched
}

// parentDir is path.Dir for clean fs.FS paths, without allocating.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "."
	}
	return p[:i]
}
