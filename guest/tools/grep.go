package tools

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/moatdev/moat/guest/match"
	"github.com/moatdev/moat/guest/proto"
)

// grepBufSize is the one buffer grep reads every file through. Running the
// regexp over a large block instead of line by line is what makes grep
// usable under wasm (about 6x slower per line than native); 256 KiB keeps
// the whole guest far below its memory limit and is past the point where a
// bigger block stops helping.
const grepBufSize = 256 << 10

// maxPatternBytes bounds the pattern: compiling a regexp costs memory in
// proportion to its length (a 3 MB literal takes seconds and hundreds of MB),
// and no real search needs more than this.
const maxPatternBytes = 16 << 10

// grep searches a file or a tree for lines matching an RE2 pattern and
// prints "path:LINE: text" for each, root-relative so the model can pass
// the path straight to read_file. Symlinks, special files, binary files
// and .gitignored files are skipped; unreadable files are skipped silently
// so that one denied file does not fail the search.
func grep(fsys fs.FS, a proto.GrepArgs, lim proto.Limits) (string, error) {
	g, err := runGrep(fsys, a, lim)
	if err != nil {
		return "", err
	}
	return formatGrep(a, g.out.String(), g.hits, g.more), nil
}

// grepShard is one shard of a grep split over several instances: the hits
// of its files, per file, for MergeGrep.
func grepShard(fsys fs.FS, a proto.GrepArgs, lim proto.Limits) ([]proto.GrepPart, bool, error) {
	g, err := runGrep(fsys, a, lim)
	if err != nil {
		return nil, false, err
	}
	return g.parts, g.more, nil
}

// formatGrep is grep's answer: the hit lines, a notice when it stopped
// early, or a sentence when nothing matched.
func formatGrep(a proto.GrepArgs, hits string, n int, more bool) string {
	if n == 0 {
		return sprintf("no matches for %s in %s", a.Pattern, displayPath(a.Path))
	}
	var b strings.Builder
	b.WriteString(hits)
	if more {
		fmtTo(&b, "[stopped after %d matches; more exist — narrow the pattern, path or glob]\n", n)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// MergeGrep joins the answers of a sharded grep into the answer one
// instance would have given: files in walk order, at most max hits, the
// same notices. The first error wins (every shard reports the same one).
func MergeGrep(args []byte, lim proto.Limits, resps []proto.Response) proto.Response {
	var a proto.GrepArgs
	proto.DecodeArgs(args, &a) // the shards decoded the same bytes without error
	var parts []proto.GrepPart
	more := false
	for _, r := range resps {
		if r.IsError {
			return proto.Response{Text: r.Text, IsError: true}
		}
		parts = append(parts, r.Parts...)
		more = more || r.More
	}
	slices.SortStableFunc(parts, func(x, y proto.GrepPart) int { return walkOrder(x.Path, y.Path) })
	max := grepMax(a, lim)
	var b strings.Builder
	n := 0
	for _, p := range parts {
		if n+p.Hits > max {
			lines := strings.SplitAfter(p.Text, "\n")
			b.WriteString(strings.Join(lines[:max-n], ""))
			n, more = max, true
			break
		}
		b.WriteString(p.Text)
		n += p.Hits
	}
	return proto.Response{Text: formatGrep(a, b.String(), n, more)}
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

func grepMax(a proto.GrepArgs, lim proto.Limits) int {
	switch {
	case a.MaxResults > 0:
		return a.MaxResults
	case lim.MaxResults > 0:
		return lim.MaxResults
	}
	return proto.DefaultMaxResults
}

// runGrep does the search; with lim.Shards > 1 it searches only its share
// of the files and collects their hits per file.
func runGrep(fsys fs.FS, a proto.GrepArgs, lim proto.Limits) (*grepper, error) {
	const tool = proto.Grep
	if len(a.Pattern) > maxPatternBytes {
		return nil, errorf("pattern is too long (%d bytes; the limit is %d)", len(a.Pattern), maxPatternBytes)
	}
	m, err := match.Compile(a.Pattern, a.IgnoreCase)
	if err != nil {
		return nil, errorf("%s", err.Error())
	}
	if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
		return nil, errorf("invalid glob pattern: %s", a.Glob)
	}
	start, err := cleanPath(a.Path)
	if err != nil {
		return nil, err
	}
	info, err := fs.Stat(fsys, start)
	if err != nil {
		return nil, fsError(tool, a.Path, err)
	}

	g := &grepper{m: m, buf: make([]byte, grepBufSize), max: grepMax(a, lim), shard: lim.Shard, shards: max(lim.Shards, 1)}
	switch {
	case info.Mode().IsRegular():
		// A file named explicitly is searched even if ignored or not
		// matching the glob: the model asked for it.
		if g.shard == 0 {
			if err := g.search(fsys, start); err != nil {
				return nil, fsError(tool, a.Path, err)
			}
		}
	case info.IsDir():
		var ig *ignorer
		if !lim.NoIgnore {
			ig = newIgnorer(fsys, start)
		}
		err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == start {
					return err
				}
				return skipEntry(d) // unreadable folder: skip, not fatal
			}
			switch t := d.Type(); {
			case t.IsDir():
				if p != start && (d.Name() == ".git" || ig != nil && ig.ignored(p, true)) {
					return fs.SkipDir
				}
				if p != start && g.depth(start, p) == shardDepth && !g.mine() {
					return fs.SkipDir // another shard's subtree
				}
				if ig != nil {
					ig.enter(p)
				}
				return nil
			case !t.IsRegular():
				return nil // symlinks are not followed; FIFOs would block
			}
			if ig != nil && ig.ignored(p, false) {
				return nil
			}
			if a.Glob != "" && !globMatch(a.Glob, p) {
				return nil
			}
			if g.depth(start, p) > shardDepth || g.mine() {
				_ = g.search(fsys, p) // a file that vanished or is denied is skipped
			}
			if g.more {
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
	ok, _ := doublestar.Match(pattern, p)
	return ok
}

// grepper carries one grep call's state across files: the one read buffer
// and the output so far.
type grepper struct {
	m    *match.Matcher
	buf  []byte
	max  int
	hits int
	more bool // a match beyond max was seen
	out  strings.Builder

	shard, shards int // this instance's share of a sharded grep
	files         int // units dealt so far, in walk order
	parts         []proto.GrepPart
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

// search greps one file; in a sharded grep its hits become one part.
func (g *grepper) search(fsys fs.FS, p string) error {
	if g.shards <= 1 {
		return g.searchFile(fsys, p)
	}
	hits := g.hits
	err := g.searchFile(fsys, p)
	if g.hits > hits {
		g.parts = append(g.parts, proto.GrepPart{Path: p, Text: g.out.String(), Hits: g.hits - hits})
		g.out.Reset()
	}
	return err
}

// searchFile greps one file, reading it in buffer-sized blocks of whole
// lines. A line longer than the buffer is searched in buffer-sized pieces
// (a match straddling two pieces of such a line may be missed; memory stays
// bounded). Binary files are skipped on the evidence of their first block.
func (g *grepper) searchFile(fsys fs.FS, p string) error {
	f, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()

	sc := fileScan{path: p, line: 1}
	carry := 0 // bytes of an unfinished line kept at the start of buf
	first := true
	for {
		n, err := io.ReadFull(f, g.buf[carry:])
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		data := g.buf[:carry+n]
		if first {
			first = false
			head := data[:min(len(data), sniffLen)]
			if !eof {
				if bytes.IndexByte(head, 0) >= 0 {
					return nil
				}
			} else {
				// The whole file is in this block: look at its head only
				// if it has a hit (most files have none).
				sc.head = head
			}
		}
		block, rest := data, data[len(data):]
		if !eof {
			if nl := bytes.LastIndexByte(data, '\n'); nl >= 0 {
				block, rest = data[:nl+1], data[nl+1:]
			}
			// else: one line fills the buffer; search it as a piece.
		}
		g.searchBlock(&sc, block, eof)
		if g.more || eof {
			return nil
		}
		sc.midLine = len(rest) == 0 && block[len(block)-1] != '\n'
		carry = copy(g.buf, rest)
	}
}

// fileScan is where searchFile is in one file.
type fileScan struct {
	path        string
	line        int  // number of the line at the start of the next block
	midLine     bool // the next block starts in the middle of a line longer than the buffer
	lastPrinted int  // so that a line longer than the buffer prints once
	// head is the start of a file read whole in one block, not yet checked
	// for binary content (a NUL byte): it is checked at the file's first hit.
	head []byte
}

// searchBlock reports the matching lines of block and advances sc.line past
// it. Only the first match of a line matters: the whole line is printed.
// Newlines are counted only up to each hit, and past the last one only when
// another block of the file follows (last is false): most files fit in one
// block and most blocks have no hit, and counting every newline of every
// file was most of grep's time in the guest.
func (g *grepper) searchBlock(sc *fileScan, block []byte, last bool) {
	counted := 0 // newlines before block[counted] are included in sc.line
	for pos := 0; pos < len(block); {
		s, e, ok := g.m.Next(block[pos:])
		if !ok {
			break
		}
		start, end := pos+s, pos+e
		if sc.head != nil {
			binary := bytes.IndexByte(sc.head, 0) >= 0
			sc.head = nil
			if binary {
				return
			}
		}
		sc.line += countNewlines(block[counted:start])
		counted = start
		if sc.line != sc.lastPrinted {
			if g.hits == g.max {
				g.more = true
				return
			}
			g.hits++
			sc.lastPrinted = sc.line
			g.printLine(sc.path, sc.line, block[start:end], g.hitOffset(block[start:end], start == 0 && sc.midLine), start == 0 && sc.midLine)
		}
		pos = end + 1
	}
	if !last {
		sc.line += countNewlines(block[counted:])
	}
}

// hitOffset is where the first match of a matching line starts, when
// printLine needs it: a line too long to show whole, or a piece of one.
func (g *grepper) hitOffset(line []byte, midLine bool) int {
	if !midLine && len(line) <= proto.MaxLineBytes-hitContext {
		return 0 // printLine shows the line from its start
	}
	return max(g.m.Start(line), 0)
}

// hitContext is how much text before a match is shown when the match is
// too far into a long line for the line's start to be shown.
const hitContext = 64

// printLine writes one hit as "path:LINE: text", the text cut to
// proto.MaxLineBytes so one minified line cannot flood the answer. When the
// match lies beyond that cut (or text is a piece from the middle of a line
// longer than the buffer), the text starts shortly before the match instead,
// marked with a leading "…", so the model still sees what matched.
func (g *grepper) printLine(p string, line int, text []byte, hitOff int, midLine bool) {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	g.out.WriteString(p)
	g.out.WriteByte(':')
	g.out.WriteString(strconv.Itoa(line))
	g.out.WriteString(": ")
	if midLine || hitOff > proto.MaxLineBytes-hitContext {
		from := max(0, hitOff-hitContext)
		for from < hitOff && !utf8.RuneStart(text[from]) {
			from++
		}
		text = text[from:]
		g.out.WriteString("…")
	}
	if len(text) > proto.MaxLineBytes {
		g.out.Write(cutUTF8(text, proto.MaxLineBytes))
		g.out.WriteString("…")
	} else {
		g.out.Write(text)
	}
	g.out.WriteByte('\n')
}
