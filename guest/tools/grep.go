package tools

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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

// maxPatternBytes bounds the pattern: compiling a regexp costs memory in
// proportion to its length (a 3 MB literal takes seconds and hundreds of MB),
// and no real search needs more than this.
const maxPatternBytes = 16 << 10

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
	g, err := runGrep(fsys, a, lim, 0, 1)
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
	g, err := runGrep(fsys, a.GrepArgs, lim, a.Shard, a.Shards)
	if err != nil {
		return "", err
	}
	// The host decodes invalid UTF-8 as U+FFFD: the cuts must index the
	// text it will have, or the merge would cut a line in the middle.
	for i := range g.parts {
		g.parts[i].Text, g.parts[i].Cuts = proto.ValidUTF8(g.parts[i].Text, g.parts[i].Cuts)
	}
	r := proto.GrepShardResult{Parts: g.parts, More: g.more, StopAt: g.stopAt, MoreNotes: g.notes.more, TimeUp: g.notes.late}
	for _, n := range g.notes.list {
		r.Notes = append(r.Notes, proto.GrepNote{At: n.at, Text: n.text})
	}
	return string(proto.AppendGrepShard(nil, &r)), nil
}

// MergeGrep joins the answers of a grep's shards (none of them an error)
// into the answer one instance would have given: files in walk order, the
// same caps, notices and notes, byte for byte in every output mode. args
// and lim are the grep's.
//
// The notes of all shards are merged as one walk would have made them: a
// note several shards made (the .gitignore of a folder every shard walks)
// once, at the first place of the walk it arose, and none from beyond the
// file where one instance would have stopped at a cap. That one instance
// stops at the file where the merged hits reach the cap or at a shard's
// StopAt, whichever comes first: every shard walks at least that far. The
// count of notes past those shown is exact unless a shard kept fewer than
// it had (more than maxShardNotes); a deadline's note from any shard is
// kept, as the answer may then lack hits of that shard.
func MergeGrep(args []byte, lim proto.Limits, shards []proto.GrepShardResult) proto.Response {
	var a proto.GrepArgs
	proto.DecodeArgs(args, &a) // the shards decoded the same bytes without error
	var parts []proto.GrepPart
	more := false
	for _, r := range shards {
		parts = append(parts, r.Parts...)
		more = more || r.More
	}
	slices.SortStableFunc(parts, func(x, y proto.GrepPart) int { return walkOrder(x.Path, y.Path) })
	ans := takeParts(a, lim, parts, more)

	stop, stopped := ans.cutAt, ans.cut
	for _, r := range shards {
		if r.More && r.StopAt != "" && (!stopped || walkOrder(r.StopAt, stop) < 0) {
			stop, stopped = r.StopAt, true
		}
	}
	var notes []walkNote
	moreNotes, late := 0, ""
	seen := map[string]int{} // text -> index in notes
	for _, r := range shards {
		moreNotes += r.MoreNotes
		if late == "" {
			late = r.TimeUp
		}
		for _, n := range r.Notes {
			if stopped && walkOrder(n.At, stop) > 0 {
				continue
			}
			if i, ok := seen[n.Text]; ok {
				if walkOrder(n.At, notes[i].at) < 0 {
					notes[i].at = n.At
				}
				continue
			}
			seen[n.Text] = len(notes)
			notes = append(notes, walkNote{at: n.At, text: n.Text})
		}
	}
	slices.SortStableFunc(notes, func(x, y walkNote) int { return walkOrder(x.at, y.at) })
	return proto.Response{Text: ans.finish(a, notes, moreNotes, late)}
}

// grepAnswer is grep's answer being written: the hits taken so far.
type grepAnswer struct {
	b     strings.Builder
	n     int    // hits (files outside content mode) taken
	more  bool   // it stopped early: more exist
	full  bool   // stopped by the byte cap, not max_results
	cut   bool   // it stopped inside the parts, at cutAt
	cutAt string // the path of the part it stopped at
}

// takeParts starts grep's answer from the parts of the files with hits, in
// walk order: their text up to max_results hits and MaxGrepBytes bytes,
// cut only where one instance would have stopped (GrepPart.Cuts). A single
// grep and MergeGrep both answer through it and finish, so they agree by
// construction.
func takeParts(a proto.GrepArgs, lim proto.Limits, parts []proto.GrepPart, more bool) *grepAnswer {
	max := grepMax(a, lim)
	sep := grepSep(a)
	ans := &grepAnswer{more: more}
	b := &ans.b
	n, full := 0, false
	for _, p := range parts {
		s := ""
		if b.Len() > 0 {
			s = sep
		}
		k := 0
		for k < len(p.Cuts) && n+k < max && b.Len()+len(s)+p.Cuts[k] <= proto.MaxGrepBytes {
			k++
		}
		if k > 0 {
			b.WriteString(s)
			b.WriteString(p.Text[:p.Cuts[k-1]])
		}
		n += k
		if k < len(p.Cuts) {
			full = n < max // stopped by the byte cap, not max_results
			ans.more, ans.cut, ans.cutAt = true, true, p.Path
			break
		}
	}
	ans.n, ans.full = n, full
	return ans
}

// finish ends the answer: a notice when it stopped early or a sentence
// when nothing matched, then the notes of the walk (walkNotes.write), the
// first maxNotes of list and a count of the others.
func (ans *grepAnswer) finish(a proto.GrepArgs, list []walkNote, moreNotes int, late string) string {
	b := &ans.b
	if ans.n == 0 && !ans.more {
		fmtTo(b, "no matches for %s in %s\n", a.Pattern, displayPath(a.Path))
	}
	if ans.more {
		unit := "matches"
		if grepMode(a) != proto.GrepContent {
			unit = "files"
		}
		if ans.full {
			fmtTo(b, "[stopped after %d %s at the %s output limit; more exist — narrow the pattern, path or glob]\n",
				ans.n, unit, humanSize(proto.MaxGrepBytes))
		} else {
			fmtTo(b, "[stopped after %d %s; more exist — narrow the pattern, path or glob]\n", ans.n, unit)
		}
	}
	writeNotes(b, list, moreNotes, late)
	return strings.TrimSuffix(b.String(), "\n")
}

// grepMode is the output mode asked for, content by default.
func grepMode(a proto.GrepArgs) string {
	if a.OutputMode == "" {
		return proto.GrepContent
	}
	return a.OutputMode
}

// grepContext returns how many lines of context to show before and after
// each hit: before_context and after_context override context, as ripgrep's
// -B and -A override -C. Only content mode shows context.
func grepContext(a proto.GrepArgs) (before, after int) {
	if grepMode(a) != proto.GrepContent {
		return 0, 0
	}
	before, after = a.Context, a.Context
	if a.BeforeContext > 0 {
		before = a.BeforeContext
	}
	if a.AfterContext > 0 {
		after = a.AfterContext
	}
	return min(before, proto.MaxContext), min(after, proto.MaxContext)
}

// grepSep is what stands between the output of two files: ripgrep's "--"
// when context is shown, nothing otherwise.
func grepSep(a proto.GrepArgs) string {
	if b, c := grepContext(a); b > 0 || c > 0 {
		return "--\n"
	}
	return ""
}

// walkOrder compares root-relative paths in the order fs.WalkDir visits
// them: folder by folder, names sorted within each.
func walkOrder(x, y string) int {
	for {
		xa, xrest, xok := strings.Cut(x, "/")
		ya, yrest, yok := strings.Cut(y, "/")
		if c := strings.Compare(xa, ya); c != 0 {
			return c
		}
		if !xok || !yok {
			switch {
			case xok == yok:
				return 0
			case !xok:
				return -1
			}
			return 1
		}
		x, y = xrest, yrest
	}
}

// grepMax is how many hits (files, outside content mode) an answer shows:
// max_results, else the host's limit, else the default, and never more
// than proto.MaxMaxResults, which bounds the guest's memory whatever the
// host asks for.
func grepMax(a proto.GrepArgs, lim proto.Limits) int {
	n := proto.DefaultMaxResults
	switch {
	case a.MaxResults > 0:
		n = a.MaxResults
	case lim.MaxResults > 0:
		n = lim.MaxResults
	}
	return min(n, proto.MaxMaxResults)
}

// runGrep does the search; with shards > 1 it searches only its share (shard)
// of the files.
func runGrep(fsys fs.FS, a proto.GrepArgs, lim proto.Limits, shard, shards int) (*grepper, error) {
	const tool = proto.Grep
	if len(a.Pattern) > maxPatternBytes {
		return nil, errorf("pattern is too long (%d bytes; the limit is %d)", len(a.Pattern), maxPatternBytes)
	}
	switch a.OutputMode {
	case "", proto.GrepContent, proto.GrepFiles, proto.GrepCount:
	default:
		return nil, errorf("output_mode must be %s, %s or %s, got %s", proto.GrepContent, proto.GrepFiles, proto.GrepCount, a.OutputMode)
	}
	if a.Context < 0 || a.BeforeContext < 0 || a.AfterContext < 0 {
		return nil, errorf("context lines must be 0 or more")
	}
	m, err := match.Compile(a.Pattern, a.IgnoreCase)
	if err != nil {
		return nil, errorf("%s", err.Error())
	}
	strict, err := strictRegexp(a.Pattern, a.IgnoreCase)
	if err != nil {
		return nil, err
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
		mode: grepMode(a), sep: len(grepSep(a)), shard: shard, shards: max(shards, 1),
		dl: newDeadline(lim), notes: &walkNotes{}}
	if g.shards > 1 {
		g.notes.keep = maxShardNotes
	}
	g.before, g.after = grepContext(a)
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
				g.notes.timeUp(noteFileTimeUp)
			}
		}
	case info.IsDir():
		err := walkTree(fsys, start, lim.NoIgnore, g.dl, g.notes, func(p string, d fs.DirEntry) error {
			switch t := d.Type(); {
			case t.IsDir():
				if g.depth(start, p) == shardDepth && !g.mine() {
					return fs.SkipDir // another shard's subtree
				}
				return nil
			case !t.IsRegular():
				return nil // symlinks are not followed; FIFOs would block
			}
			if a.Glob != "" && !globMatch(a.Glob, p) {
				return nil
			}
			if g.depth(start, p) > shardDepth || g.mine() {
				_ = g.search(p) // a file that vanished or is denied is skipped
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
	default:
		return nil, errorf("not a regular file: %s (%s)", displayPath(a.Path), fileKind(info.Mode()))
	}
	return g, nil
}

// noteFileTimeUp is the note of a grep of one file stopped at its deadline.
const noteFileTimeUp = "the time limit was reached before the whole file was searched, so the results are incomplete; narrow the pattern"

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
	strict *regexp.Regexp // see strictRegexp; nil when it is not needed
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

	out  []byte // output of the file being searched
	cuts []int  // where out may be cut, one per hit
	stop bool   // a cap was reached in this file

	shard, shards int // this instance's share of a sharded grep
	files         int // units dealt so far, in walk order

	dl     *deadline
	piece  int  // bytes searched between looks at the clock (grepPiece, less in tests)
	late   bool // the deadline passed in the middle of a file: the walk stops
	notes  *walkNotes
	stopAt string // the file at which more was set: the walk stopped there
}

// shardDepth is the depth (below grep's path) of the units a sharded grep
// deals out: every folder and file down to this depth is a unit, handed to
// the shards in turn in walk order; whatever lies deeper goes with the
// folder it is in. Each shard still lists the folders above that depth (a
// few hundred entries in Go's source tree), but walks only its own
// subtrees, so no walking is done twice below it. Depth 2 splits a source
// tree finely enough that the shards finish together.
const shardDepth = 2

// depth is how far below start p lies (1 for start's entries). Without
// sharding every path counts as deeper than the units, so all is searched.
func (g *grepper) depth(start, p string) int {
	if g.shards <= 1 {
		return shardDepth + 1
	}
	rel := p
	if start != "." {
		rel = strings.TrimPrefix(p, start+"/")
	}
	return strings.Count(rel, "/") + 1
}

// mine deals the next unit in walk order and reports whether it is this
// shard's. Every shard walks the units in the same order, so they agree.
func (g *grepper) mine() bool {
	k := g.files
	g.files++
	return k%g.shards == g.shard
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
	if g.late {
		// Stopped in the middle: whether the file is binary is not known,
		// so none of its lines is shown.
		return nil
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

// fileScan is where searchFile is in one file.
type fileScan struct {
	path      string
	line      int  // number of the line at block[counted]
	counted   int  // offset in the block up to which lines are counted
	blockLine int  // number of the block's first line
	last      bool // the block ends the file
	midLine   bool // the block starts in the middle of a line longer than the buffer
	tailHit   bool // the last line of the block before had a hit
	hit       bool // the file has a hit (and so must be checked for NUL bytes)
	head      bool // the file was skipped unsearched: a NUL in its first bytes
	done      bool // nothing more to find in this file (files_with_matches)
	count     int  // matching lines (count mode)
	lastOut   int  // number of the last line written to out
	lastHit   int  // number of the last matching line
	pending   bool // the last hit's cut is not recorded yet (its after-context may follow)
	// ring holds the last lines before the block, cut to what is shown, for
	// before-context that reaches into an earlier block.
	ring [][]byte
}

// searchFile greps one file, reading it in blocks of whole lines; the
// buffer grows to hold a line longer than itself (up to maxLineBuf). It
// returns the offset of a NUL byte when the file has a hit and is binary
// (-1 otherwise): only a file with a hit is read for NUL bytes beyond its
// search, as most files have none.
func (g *grepper) searchFile(p string) (sc fileScan, nulAt int64, err error) {
	f, err := g.fsys.Open(p)
	if err != nil {
		return sc, -1, err
	}
	defer f.Close()

	sc = fileScan{path: p, line: 1}
	carry := 0    // bytes of an unfinished line kept at the start of buf
	var off int64 // file offset of buf[0]
	for {
		if off+int64(carry) > 0 && g.dl.passed() {
			// Every read, not only every piece: a line with no end (a
			// sparse file's hole, a minified bundle) is read a whole
			// buffer at a time, up to maxLineBuf, with no piece between.
			g.late = true
			return sc, -1, nil
		}
		if carry == len(g.buf) && len(g.buf) < g.maxBuf {
			nb := make([]byte, min(2*len(g.buf), g.maxBuf))
			copy(nb, g.buf[:carry])
			g.buf = nb
		}
		n, rerr := io.ReadFull(f, g.buf[carry:])
		eof := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !eof {
			return sc, -1, rerr
		}
		data := g.buf[:carry+n]
		if off == 0 && carry == 0 && !eof {
			// A NUL in the first bytes (where git and GNU grep look)
			// marks most binary files: skip them unsearched, whatever
			// their size. A file read whole in one block is checked only
			// at its first hit, below: most files have none.
			if i := bytes.IndexByte(data[:min(len(data), sniffLen)], 0); i >= 0 {
				sc.head = true
				return sc, int64(i), nil
			}
		}
		if sc.hit {
			if i := bytes.IndexByte(data[carry:], 0); i >= 0 {
				return sc, off + int64(carry+i), nil
			}
		}
		block, rest := data, data[len(data):]
		if !eof {
			if nl := bytes.LastIndexByte(data, '\n'); nl >= 0 {
				block, rest = data[:nl+1], data[nl+1:]
			} else if len(g.buf) < g.maxBuf {
				carry = len(data) // a line longer than the buffer: grow it
				continue
			}
			// else: one line fills the largest buffer; search it as a piece.
		}
		hadHit := sc.hit
		if !g.searchPieces(&sc, block, eof) {
			g.late = true
			return sc, -1, nil
		}
		if sc.hit && !hadHit {
			// The first hit: the file is binary if a NUL is anywhere in
			// it, before this point too.
			if i := bytes.IndexByte(data, 0); i >= 0 {
				return sc, off + int64(i), nil
			}
			if off > 0 {
				if at, err := g.nulBefore(p, off); err != nil || at >= 0 {
					return sc, at, err
				}
			}
		}
		if eof {
			return sc, -1, nil
		}
		if g.stop || sc.done {
			// Nothing more to show, but a NUL further on still makes the
			// file binary.
			if i := bytes.IndexByte(rest, 0); i >= 0 {
				return sc, off + int64(len(data)-len(rest)+i), nil
			}
			at, err := nulIn(f, g.buf, off+int64(len(data)))
			return sc, at, err
		}
		sc.midLine = len(rest) == 0 && len(block) > 0 && block[len(block)-1] != '\n'
		off += int64(len(data) - len(rest))
		carry = copy(g.buf, rest)
	}
}

// grepPiece is how much of a block grep searches between two looks at the
// clock, in whole lines: under wasm a regexp with no literal to look for
// runs its NFA over every byte at well under 1 MB/s, so a whole block could
// outlast the margin the guest keeps before the host's deadline
// (deadlineMargin).
const grepPiece = 64 << 10

// searchPieces searches a block of whole lines (but perhaps its last) in
// pieces of about g.piece bytes, each ending a line, as if each had been
// read on its own. It reports false when the deadline passed before the
// file was done.
func (g *grepper) searchPieces(sc *fileScan, block []byte, last bool) bool {
	piece := g.piece
	if piece <= 0 {
		piece = grepPiece
	}
	for len(block) > piece {
		cut := bytes.LastIndexByte(block[:piece], '\n') + 1
		if cut == 0 {
			i := bytes.IndexByte(block[piece:], '\n')
			if i < 0 {
				break // one line (or piece of one) to the end
			}
			cut = piece + i + 1
		}
		if cut == len(block) {
			break
		}
		g.searchBlock(sc, block[:cut], false)
		sc.midLine = false // the next piece starts a line
		block = block[cut:]
		if g.stop || sc.done {
			return true
		}
		if g.dl.passed() {
			return false
		}
	}
	g.searchBlock(sc, block, last)
	return last || !g.dl.passed() // a file read whole in one block costs no look
}

// nulBefore returns the offset of the first NUL byte among the first n
// bytes of file p, or -1. It reopens the file: that happens only for a
// file larger than the buffer whose first hit lies past the first block.
func (g *grepper) nulBefore(p string, n int64) (int64, error) {
	f, err := g.fsys.Open(p)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	return nulIn(io.LimitReader(f, n), make([]byte, 64<<10), 0)
}

// nulIn reads r to its end through buf and returns the offset of its first
// NUL byte, counting from base, or -1.
func nulIn(r io.Reader, buf []byte, base int64) (int64, error) {
	for {
		n, err := r.Read(buf)
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return base + int64(i), nil
		}
		base += int64(n)
		if errors.Is(err, io.EOF) {
			return -1, nil
		}
		if err != nil {
			return -1, err
		}
	}
}

// searchBlock finds the matching lines of block. In content mode it writes
// them with their context and records a cut after each; newlines are
// counted only as far as needed (most blocks have no hit, and counting
// every newline of every file was most of grep's time in the guest).
func (g *grepper) searchBlock(sc *fileScan, block []byte, last bool) {
	sc.counted, sc.blockLine = 0, sc.line
	sc.last = last
	tail := false // the block's last line has a hit
	for pos := 0; pos < len(block) && !g.stop && !sc.done; {
		s, e, ok := g.m.Next(block[pos:])
		if !ok {
			break
		}
		start, end := pos+s, pos+e
		pos = end + 1
		if g.strict != nil && !utf8.Valid(block[start:end]) && !g.strict.Match(strictLine(block[start:end])) {
			continue // matched only by taking an invalid byte for U+FFFD (see strictRegexp)
		}
		tail = end == len(block)
		if start == 0 && sc.midLine && sc.tailHit {
			continue // the rest of a line longer than the buffer, counted already
		}
		sc.hit = true
		switch g.mode {
		case proto.GrepFiles:
			sc.done = true
		case proto.GrepCount:
			sc.count++
		default:
			g.hitLine(sc, block, start, end, start+g.hitOffset(block[start:end], start == 0 && sc.midLine))
		}
	}
	if n := len(block); n > 0 && block[n-1] != '\n' {
		// A piece of a line longer than the largest buffer: the next
		// block goes on with its last line.
		if bytes.IndexByte(block, '\n') >= 0 || !sc.midLine {
			sc.tailHit = tail
		} else {
			sc.tailHit = sc.tailHit || tail
		}
	}
	if g.mode != proto.GrepContent || g.stop {
		return
	}
	g.flushAfter(sc, block, len(block))
	if last {
		if sc.pending {
			g.cut(sc)
		}
		return
	}
	sc.line += countNewlines(block[sc.counted:])
	if g.before > 0 {
		g.keepTail(sc, block)
	}
}

// hitLine writes one matching line with its context: first the rest of
// the previous hit's after-context, then a "--" if lines were skipped,
// the before-context, and the line.
func (g *grepper) hitLine(sc *fileScan, block []byte, start, end, hit int) {
	g.flushAfter(sc, block, start)
	sc.line += countNewlines(block[sc.counted:start])
	sc.counted = start
	h := sc.line
	if h <= sc.lastOut {
		return // another piece of a line longer than the buffer, already shown
	}
	if sc.pending {
		g.cut(sc)
		if g.stop {
			return
		}
	}
	if g.hits+len(g.cuts) >= g.max {
		g.stop = true
		return
	}
	from := max(h-g.before, sc.lastOut+1, 1)
	if sc.lastOut > 0 && from > sc.lastOut+1 && (g.before > 0 || g.after > 0) {
		g.out = append(g.out, "--\n"...)
	}
	for l := from; l < h; l++ {
		g.emit(sc.path, l, '-', g.lineBefore(sc, block, start, h-l), 0, false)
	}
	g.emit(sc.path, h, ':', block[start:end], hit-start, start == 0 && sc.midLine)
	sc.lastOut, sc.lastHit, sc.pending = h, h, true
}

// flushAfter writes the lines of the block from sc.counted up to limit that
// are after-context of the last hit, and records that hit's cut once its
// after-context is complete.
func (g *grepper) flushAfter(sc *fileScan, block []byte, limit int) {
	for sc.pending && sc.line <= sc.lastHit+g.after && sc.counted < limit {
		lineEnd := limit
		if e := bytes.IndexByte(block[sc.counted:limit], '\n'); e >= 0 {
			lineEnd = sc.counted + e
		} else if limit == len(block) && !sc.last {
			break // a piece of a line longer than the largest buffer: it goes on in the next block
		}
		if sc.line > sc.lastOut {
			g.emit(sc.path, sc.line, '-', block[sc.counted:lineEnd], 0, false)
			sc.lastOut = sc.line
		}
		sc.counted = min(lineEnd+1, len(block))
		sc.line++
	}
	if sc.pending && sc.line > sc.lastHit+g.after {
		g.cut(sc)
	}
}

// cut records the end of the last hit's output and checks the byte cap.
func (g *grepper) cut(sc *fileScan) {
	sc.pending = false
	g.cuts = append(g.cuts, len(g.out))
	sep := 0
	if len(g.parts) > 0 {
		sep = g.sep
	}
	if g.bytes+sep+len(g.out) > proto.MaxGrepBytes {
		g.stop = true
	}
}

// lineBefore returns the line k lines before the one starting at start:
// from the block, or from the ring of lines kept from earlier blocks.
func (g *grepper) lineBefore(sc *fileScan, block []byte, start, k int) []byte {
	h := sc.line // the line at start
	if h-k >= sc.blockLine {
		pos := start
		for ; k > 0; k-- {
			e := pos - 1
			pos = bytes.LastIndexByte(block[:e], '\n') + 1
			if k == 1 {
				return block[pos:e]
			}
		}
	}
	i := len(sc.ring) - (sc.blockLine - (h - k))
	if i < 0 || i >= len(sc.ring) {
		return nil // cannot happen: the ring holds g.before lines
	}
	return sc.ring[i]
}

// keepTail saves the block's last lines for the before-context of a hit
// early in the next block.
func (g *grepper) keepTail(sc *fileScan, block []byte) {
	var tail [][]byte
	end := len(block)
	if end > 0 && block[end-1] == '\n' {
		end--
	} else {
		return // a piece of a long line: no whole line ends here
	}
	for len(tail) < g.before && end >= 0 {
		s := bytes.LastIndexByte(block[:end], '\n') + 1
		tail = append(tail, bytes.Clone(block[s:min(end, s+proto.MaxLineBytes+2)]))
		if s == 0 {
			break
		}
		end = s - 1
	}
	slices.Reverse(tail)
	sc.ring = append(sc.ring, tail...)
	if len(sc.ring) > g.before {
		sc.ring = slices.Delete(sc.ring, 0, len(sc.ring)-g.before)
	}
}

// hitOffset is where the first match of a matching line starts, when
// emit needs it: only for a line too long to show from its start, or a
// piece of a longer one (finding it costs a second look at the line).
func (g *grepper) hitOffset(line []byte, midLine bool) int {
	if !midLine && len(line) <= proto.MaxLineBytes-hitContext {
		return 0 // emit shows the line from its start
	}
	return max(g.m.Start(line), 0)
}

// hitContext is how much text before a match is shown when the match is
// too far into a long line for the line's start to be shown.
const hitContext = 64

// emit writes one line as "path:LINE: text" (a hit, sep ':') or
// "path-LINE- text" (context, sep '-'), the text cut to proto.MaxLineBytes
// so one minified line cannot flood the answer. When the match lies beyond
// that cut (or text is a piece from the middle of a line longer than the
// buffer), the text starts shortly before the match instead, marked with a
// leading "…", so the model still sees what matched.
func (g *grepper) emit(p string, line int, sep byte, text []byte, hitOff int, midLine bool) {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	g.out = append(g.out, quotePath(p)...)
	g.out = append(g.out, sep)
	g.out = strconv.AppendInt(g.out, int64(line), 10)
	g.out = append(g.out, sep, ' ')
	if midLine || hitOff > proto.MaxLineBytes-hitContext {
		from := max(0, min(hitOff, len(text))-hitContext)
		for from < hitOff && from < len(text) && !utf8.RuneStart(text[from]) {
			from++
		}
		text = text[from:]
		g.out = append(g.out, "…"...)
	}
	if len(text) > proto.MaxLineBytes {
		g.out = append(g.out, cutUTF8(text, proto.MaxLineBytes)...)
		g.out = append(g.out, "…"...)
	} else {
		g.out = append(g.out, text...)
	}
	g.out = append(g.out, '\n')
}
