package tools

import (
	"errors"
	"io/fs"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/moatdev/moat/guest/match"
	"github.com/moatdev/moat/guest/proto"
)

// grepBufSize is the buffer grep reads files through. Running the regexp
// over a large block instead of line by line is what makes grep usable
// under wasm (about 6x slower per line than native); 256 KiB keeps the
// whole guest far below its memory limit and is past the point where a
// bigger block stops helping.
const grepBufSize = 256 << 10

// maxLineBuf is how far the buffer grows to hold one line whole, so that a
// minified bundle or a source map (lines of several MB) is searched like
// any other file. A line longer than this is searched in pieces of this
// size: a match straddling two pieces is missed, and memory stays bounded.
const maxLineBuf = 64 << 20

// maxPatternBytes bounds the pattern's length, as a request's size: what
// bounds a pattern is the memory its program needs (match.MaxProgInsts,
// which a keyword list of 10,000 words is well inside), and this only
// keeps the text parsed before that is known (a parse costs memory in
// proportion to the length) to a size no keyword list reaches first.
const maxPatternBytes = 512 << 10

// bigPattern is the length past which a pattern (a keyword list) is
// compiled between two collections of the guest's garbage: compiling one
// of 10,000 words makes about 75 MB of it for the 25 MB it keeps, and
// the guest's memory, which never shrinks, ran out at its cap on the
// third such call of a session (the heap's free spans too scattered for
// the next call's large tables).
const bigPattern = 16 << 10

// grep searches a file or a tree for lines matching an RE2 pattern. Its
// answer, in every mode, is the one MergeGrep gives for the same parts (see
// assemble): in content mode "path:LINE: text" per matching line, with
// "path-LINE- text" context lines and "--" between groups as ripgrep lays
// them out; "path" per file in files_with_matches mode; "path:N" per file
// in count mode. Paths are root-relative so the model can pass them
// straight to read_file. Symlinks, special files, binary files and
// .gitignored files are skipped; unreadable files are skipped silently so
// that one denied file does not fail the search.
//
// Binary files: a file with a NUL byte anywhere is binary, and none of its
// lines is shown, in any mode, since read_file refuses it too. ripgrep
// stops at the first buffer holding a NUL and prints the hits before it
// with a warning; moat shows none, so that the model is never told about
// text it cannot read. A binary file named explicitly as the path answers
// "binary file matches" (as ripgrep does) when it would have matched.
//
// The tree is walked as glob walks it (walkTree): after the hits come the
// notes of what was not searched (a folder too deep to read, an ignore
// file past its bounds), and a grep that reaches its deadline answers with
// the hits found so far and a note instead of being cut off by the host.
func grep(fsys fs.FS, a proto.GrepArgs, lim proto.Limits) (string, error) {
	g, err := runGrep(fsys, a, lim, 0, 1, nil)
	if err != nil {
		return "", err
	}
	ans := takeParts(a, lim, g.parts, g.more)
	return ans.finish(a, g.notes.list, g.notes.more, g.notes.late), nil
}

// maxShardNotes is how many notes a shard sends: more than one answer
// shows, since the merge drops those another shard has too and those past
// where one instance would have stopped.
const maxShardNotes = 64

// grepShard is one shard of a grep split over several instances
// (proto.GrepShard): the hits of its files, per file, for MergeGrep, as
// JSON.
func grepShard(fsys fs.FS, a proto.GrepShardArgs, lim proto.Limits) (string, error) {
	if a.Shards < 2 || a.Shard < 0 || a.Shard >= a.Shards {
		return "", errorf("invalid arguments for %s: shard %d of %d", proto.GrepShard, a.Shard, a.Shards)
	}
	g, err := runGrep(fsys, a.GrepArgs, lim, a.Shard, a.Shards, a.Weights)
	if err != nil {
		return "", err
	}
	// The host decodes invalid UTF-8 as U+FFFD: the cuts must index the
	// text it will have, or the merge would cut a line in the middle.
	for i := range g.parts {
		g.parts[i].Text, g.parts[i].Cuts = proto.ValidUTF8(g.parts[i].Text, g.parts[i].Cuts)
	}
	r := proto.GrepShardResult{Parts: g.parts, More: g.more, StopAt: g.stopAt, MoreNotes: g.notes.more, TimeUp: g.notes.late}
	if g.weigh != nil {
		r.Weights = g.weigh.weights()
	}
	for _, n := range g.notes.list {
		r.Notes = append(r.Notes, proto.GrepNote{At: n.at, Text: n.text})
	}
	return string(proto.AppendGrepShard(nil, &r)), nil
}

// runGrep does the search; with shards > 1 it searches only its share
// (shard) of the files, dealt by the weights known of its folders.
func runGrep(fsys fs.FS, a proto.GrepArgs, lim proto.Limits, shard, shards int, known []proto.FolderWeight) (*grepper, error) {
	const tool = proto.Grep
	if len(a.Pattern) > maxPatternBytes {
		return nil, errorf("pattern is too long (%d bytes; the limit is %d); split an alternation into several greps of fewer alternatives", len(a.Pattern), maxPatternBytes)
	}
	switch a.OutputMode {
	case "", proto.GrepContent, proto.GrepFiles, proto.GrepCount:
	default:
		return nil, errorf("output_mode must be %s, %s or %s, got %s", proto.GrepContent, proto.GrepFiles, proto.GrepCount, a.OutputMode)
	}
	if a.Context < 0 || a.BeforeContext < 0 || a.AfterContext < 0 {
		return nil, errorf("context lines must be 0 or more")
	}
	big := len(a.Pattern) > bigPattern
	if big {
		runtime.GC() // the last call's garbage, before this one's
	}
	m, err := match.Compile(a.Pattern, a.IgnoreCase)
	if err != nil {
		return nil, errorf("%s", err.Error())
	}
	strict, err := newStrict(a.Pattern, a.IgnoreCase)
	if err != nil {
		return nil, err
	}
	if big {
		runtime.GC() // compiling it made several times what it keeps
	}
	if a.Glob != "" {
		if err := checkGlob(a.Glob); err != nil {
			return nil, err
		}
	}
	start, err := cleanPath(a.Path)
	if err != nil {
		return nil, err
	}
	info, err := fs.Stat(fsys, start)
	if err != nil {
		return nil, fsError(tool, a.Path, err)
	}

	g := &grepper{fsys: fsys, m: m, strict: strict, buf: make([]byte, grepBufSize), maxBuf: maxLineBuf, max: grepMax(a, lim),
		mode: grepMode(a), sep: len(grepSep(a)), dealer: newDealer(shard, shards, start, known),
		dl: newDeadline(lim), notes: &walkNotes{}}
	if g.shards > 1 {
		g.notes.keep = maxShardNotes
		g.weigh = &weigher{open: []proto.FolderWeight{{Path: start}}}
	}
	g.before, g.after = grepContext(a)
	if g.dl != nil {
		// The matcher looks at the clock inside long work too (a line of
		// megabytes, a DFA rebuilding its states, regexp deciding lines).
		m.SetStop(g.dl.passed)
		if strict != nil {
			strict.stop = g.dl.passed
		}
	}
	switch {
	case info.Mode().IsRegular():
		// A file named explicitly is searched even if ignored or not
		// matching the glob: the model asked for it.
		if g.shard == 0 {
			g.explicit = true
			if err := g.search(start); err != nil {
				return nil, fsError(tool, a.Path, err)
			}
			if g.late {
				note := noteFileTimeUp
				if g.withheld {
					note = noteFileTimeUpWithheld
				}
				g.notes.timeUp(note)
			}
		}
	case info.IsDir():
		// The glob's name test (globFileFilter) spares doublestar most
		// files of a "*.go" search.
		var globSkip func(string) bool
		if a.Glob != "" {
			globSkip = globFileFilter(globPattern(a.Glob))
		}
		opts := walkOptions{noIgnore: lim.NoIgnore, skipIn: g.skipIn(start, globSkip)}
		if g.ahead = newReadAhead(fsys); g.ahead != nil {
			opts.listed = g.listed(a.Glob)
		}
		if g.shards > 1 {
			g.stopper, _ = fsys.(walkStopper)
			g.claimer, _ = fsys.(unitClaimer)
		}
		err := walkTreeWith(fsys, start, opts, g.dl, g.notes, func(p string, d fs.DirEntry) error {
			if g.pastStop(p) {
				// Another shard filled the answer before p: nothing of
				// this one's from here on can be shown.
				g.more, g.stopAt = true, p
				return fs.SkipAll
			}
			switch t := d.Type(); {
			case t.IsDir():
				if g.unit(start, p) && !g.mine(p) {
					return fs.SkipDir // another shard's subtree
				}
				return nil
			case !t.IsRegular():
				return nil // symlinks are not followed; FIFOs would block
			}
			if a.Glob != "" && !globMatch(a.Glob, p) {
				return nil
			}
			// The walk never shows a file of another shard (skipIn). A
			// file that vanished or is denied is skipped; one the file
			// system refuses is named, as its folder would be.
			read := g.read
			if err := g.search(p); err != nil && errors.Is(err, proto.ErrnoOSDenied) {
				g.notes.add(sprintf("not searched: %s (%s)", quotePath(p), osDenied))
			}
			if g.weigh != nil {
				g.weigh.add(parentDir(p), g.read-read+fileWeight)
			}
			switch {
			case g.late:
				g.notes.timeUp(noteWalkTimeUp)
				return fs.SkipAll
			case g.more:
				g.stopAt = p
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			return nil, fsError(tool, a.Path, err)
		}
		g.walkEnded()
	default:
		return nil, errorf("not a regular file: %s (%s)", displayPath(a.Path), fileKind(info.Mode()))
	}
	return g, nil
}

// listed is the walk's walkOptions.listed for grep: it tells the
// read-ahead the files of each folder the walk will search, as the walk's
// own tests below pick them (regular, not passed over, matching glob).
func (g *grepper) listed(glob string) func(string, []fs.DirEntry, func(string) bool) {
	return func(dir string, ents []fs.DirEntry, skip func(string) bool) {
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			nm := e.Name()
			if skip != nil && skip(nm) || glob != "" && !globMatch(glob, joinEntry(dir, nm)) {
				continue
			}
			names = append(names, nm)
		}
		g.ahead.listed(dir, names)
	}
}

// noteFileTimeUp is the note of a grep of one file stopped at its deadline.
const noteFileTimeUp = "the time limit was reached before the whole file was searched, so the results are incomplete; narrow the pattern"

// noteFileTimeUpWithheld is noteFileTimeUp when the file had hits that
// cannot be shown: it was not read to its end for NUL bytes (binary files
// show no lines).
const noteFileTimeUpWithheld = "the time limit was reached before the whole file was searched; lines matched, but they are not shown because the rest of the file was not checked for binary content; narrow the pattern or search a smaller file"

// skipEntry tells WalkDir to go past an entry it could not read.
func skipEntry(d fs.DirEntry) error {
	if d != nil && d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// globMatch applies grep's glob filter: a glob with a "/" is matched against
// the root-relative path, one without against the base name at any depth
// (so "*.go" means what a person means by it).
func globMatch(pattern, p string) bool {
	if !strings.Contains(pattern, "/") {
		p = p[strings.LastIndexByte(p, '/')+1:]
	}
	return matchGlob(pattern, p)
}

// grepper carries one grep call's state across files: the read buffer, the
// parts so far and the output of the file being searched.
type grepper struct {
	fsys   fs.FS
	m      *match.Matcher
	strict *strictMatcher // see strictMatcher; nil when it is not needed
	buf    []byte
	maxBuf int // how far buf may grow (maxLineBuf, less in tests)
	max    int
	mode   string
	before int
	after  int
	sep    int // bytes between two files' output in the answer
	// explicit is set when the path named one file: a binary file then
	// says that it matches instead of vanishing from the answer.
	explicit bool

	hits  int  // hits (files outside content mode) in parts
	bytes int  // bytes of parts, with the separators between them
	more  bool // a cap was reached: the walk stops
	parts []proto.GrepPart

	out []byte // output of the file being searched
	// quoted is quotePath(quotedOf), the last path emit wrote.
	quoted, quotedOf string
	cuts             []int // where out may be cut, one per hit
	stop             bool  // a cap was reached in this file

	dealer // this instance's share of a sharded grep
	// weigh, for a shard, keeps the work under the folders it walks; read
	// counts the bytes read from files.
	weigh *weigher
	read  int64

	ahead *readAhead // nil: every file is opened as usual

	dl    *deadline
	piece int  // bytes searched between looks at the clock (grepPiece, less in tests)
	late  bool // the deadline passed in the middle of a file: the walk stops
	// withheld: a file had hits but was stopped at the deadline before it
	// could be read to its end for NUL bytes, so they are not shown.
	withheld bool
	notes    *walkNotes
	stopAt   string // the file at which more was set: the walk stopped there

	// stopper, for a shard, says where another shard that has finished
	// lets this one stop (wasifs.FS.WalkStop); otherStop is that, once
	// known, and sincePoll counts the entries since it was last asked.
	stopper   walkStopper
	otherStop string
	sincePoll int
	// claimer, for a shard, deals the folder units to the shards as they
	// reach them (mine).
	claimer unitClaimer
}

// unitClaimer is a file system that deals a split grep's folder units to
// its shards as they reach them (wasifs.FS.ClaimUnit, proto.WalkStop.Claim).
type unitClaimer interface {
	ClaimUnit(p string) (mine, ok bool)
}

// mine reports whether folder unit p is this shard's to walk: the first
// shard to reach it takes it (tools.UnitDeal, through the claimer), or,
// where nothing deals them so (natively; a host with no deal, which then
// has none for any shard of the call), by the dealer's weights (mineDir).
func (g *grepper) mine(p string) bool {
	if g.claimer != nil {
		if mine, ok := g.claimer.ClaimUnit(p); ok {
			return mine
		}
	}
	return g.mineDir(p)
}

// walkStopper is a file system that knows where a shard's walk may stop
// (wasifs.FS.WalkStop; proto.WalkStop says why that is safe), told the
// shard's progress each time it is asked.
type walkStopper interface {
	WalkStop(proto.Progress) string
}

// walkStopEvery is how many entries a shard walks between two questions
// to its walkStopper (each a host call where the guest runs).
const walkStopEvery = 16

// pastStop reports whether the walk, at p, has gone past the file at
// which another shard reached the cap: the merged answer is cut at or
// before that file, so none of this shard's hits from p on is shown.
func (g *grepper) pastStop(p string) bool {
	if g.stopper == nil {
		return false
	}
	if g.otherStop == "" {
		poll := g.sincePoll%walkStopEvery == 0 // the first entry, then every walkStopEvery
		if g.sincePoll++; !poll {
			return false
		}
		if g.otherStop = g.stopper.WalkStop(g.progress(p)); g.otherStop == "" {
			return false
		}
	}
	return walkOrder(p, g.otherStop) > 0
}

// progress is the shard's progress at p: every entry before it searched.
func (g *grepper) progress(p string) proto.Progress {
	return proto.Progress{Shard: g.shard, At: p, Hits: g.hits, Bytes: g.bytes}
}

// walkEnded tells the stopper, if any, that the shard's walk ended with
// all of its share searched, so that it no longer holds the others'
// stop back.
func (g *grepper) walkEnded() {
	if g.stopper != nil && g.otherStop == "" && !g.more && !g.late {
		g.stopper.WalkStop(g.progress(""))
	}
}

// search greps one file and, if it has hits and is not binary, adds its
// part. The caps are checked here and while the file is searched, so that
// the output held never passes proto.MaxGrepBytes by more than one hit
// with its context.
func (g *grepper) search(p string) error {
	g.out, g.cuts, g.stop = g.out[:0], g.cuts[:0], false
	sc, nulAt, err := g.searchFile(p)
	if err != nil {
		return err
	}
	if g.late && (!sc.hit || sc.unknown) {
		// Stopped in the middle, with no hit, or before the file could
		// be read to its end for NUL bytes (then whether it is binary is
		// not known, so none of its lines is shown).
		if sc.unknown {
			g.withheld = true
		}
		return nil
	}
	if g.late && sc.pending && nulAt < 0 {
		g.cut(&sc) // the last hit's after-context ends where the search stopped
	}
	if nulAt >= 0 {
		g.stop = false // a binary file's hits never count
		switch {
		case !g.explicit || !sc.hit && !sc.head:
			return nil
		case sc.head:
			g.out = append(g.out[:0], sprintf("%s: binary file (a NUL byte at offset %d); grep does not search binary files\n", quotePath(p), int(nulAt))...)
		default:
			g.out = append(g.out[:0], sprintf("%s: binary file matches (a NUL byte at offset %d); grep shows no lines of binary files\n", quotePath(p), int(nulAt))...)
		}
		g.cuts = append(g.cuts[:0], len(g.out))
	} else if sc.hit && g.mode != proto.GrepContent {
		if g.hits >= g.max {
			g.more = true
			return nil
		}
		g.out = append(g.out[:0], quotePath(p)...)
		if g.mode == proto.GrepCount {
			g.out = append(g.out, ':')
			g.out = strconv.AppendInt(g.out, int64(sc.count), 10)
		}
		g.out = append(g.out, '\n')
		g.cuts = append(g.cuts[:0], len(g.out))
		g.stop = g.bytes+g.sep+len(g.out) > proto.MaxGrepBytes
	}
	if g.stop {
		g.more = true
	}
	if len(g.cuts) == 0 {
		return nil
	}
	if len(g.parts) > 0 {
		g.bytes += g.sep
	}
	g.bytes += len(g.out)
	g.hits += len(g.cuts)
	g.parts = append(g.parts, proto.GrepPart{Path: p, Text: string(g.out), Hits: len(g.cuts), Cuts: slices.Clone(g.cuts)})
	return nil
}
