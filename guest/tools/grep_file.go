package tools

// Searching one file: reading it in blocks that hold whole lines (growing
// the buffer for a long line), finding its binary NUL wherever it is,
// looking at the clock between pieces, and writing hits with their context.

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/match"
	"github.com/moatdev/moat/guest/proto"
)

// fileScan is where searchFile is in one file.
type fileScan struct {
	path      string
	line      int  // number of the line at block[counted]
	counted   int  // offset in the block up to which lines are counted
	blockLine int  // number of the block's first line
	last      bool // the block ends the file
	midLine   bool // the block starts in the middle of a line longer than the buffer
	pieces    bool // a line longer than the largest buffer was met (and noted)
	unknown   bool // stopped at the deadline before the whole file was read for NUL bytes
	tailHit   bool // the last line of the block before had a hit
	hit       bool // the file has a hit (and so must be checked for NUL bytes)
	// checkedBefore: the bytes before the block of the first hit were read for NUL bytes.
	checkedBefore bool
	head          bool // the file was skipped unsearched: a NUL in its first bytes
	done          bool // nothing more to find in this file (files_with_matches)
	count         int  // matching lines (count mode)
	lastOut       int  // number of the last line written to out
	lastHit       int  // number of the last matching line
	pending       bool // the last hit's cut is not recorded yet (its after-context may follow)
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
	f, ok := g.ahead.open(p)
	if !ok {
		if f, err = g.fsys.Open(p); err != nil {
			return sc, -1, err
		}
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
			return g.stopLate(sc, f, g.buf[:carry], off)
		}
		if carry == len(g.buf) && len(g.buf) < g.maxBuf+1 {
			// +1: a line of exactly maxBuf bytes fits with its newline.
			nb := make([]byte, min(2*len(g.buf), g.maxBuf+1))
			copy(nb, g.buf[:carry])
			g.buf = nb
		}
		n, rerr := readFull(f, g.buf[carry:])
		g.read += int64(n)
		// readFull returns io.EOF unwrapped; errors.Is only for the rest
		// (under wasm its interface checks cost a little per file).
		eof := rerr == io.EOF || rerr != nil && (errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF))
		if rerr != nil && !eof {
			return sc, -1, rerr
		}
		data := g.buf[:carry+n]
		if off == 0 && carry == 0 && !eof {
			// A NUL in the first bytes (where git and GNU grep look)
			// marks most binary files: skip them unsearched, whatever
			// their size. A file read whole in one block is checked only
			// at its first hit, below: most files have none.
			if i := match.IndexByte(data[:min(len(data), sniffLen)], 0); i >= 0 {
				sc.head = true
				return sc, int64(i), nil
			}
		}
		if sc.hit {
			if i := match.IndexByte(data[carry:], 0); i >= 0 {
				return sc, off + int64(carry+i), nil
			}
		}
		block, rest := data, data[len(data):]
		if !eof {
			if nl := match.LastNewline(data); nl >= 0 {
				block, rest = data[:nl+1], data[nl+1:]
			} else if len(g.buf) < g.maxBuf+1 {
				carry = len(data) // a line longer than the buffer: grow it
				continue
			} else if !sc.pieces {
				// One line fills the largest buffer: it is searched in
				// pieces, each decided with its anchors where they can be.
				// (A run of NUL bytes, a sparse file's hole, is no line:
				// the file is binary and shows nothing.)
				sc.pieces = true
				if match.IndexByte(data, 0) < 0 {
					size := sprintf("%d bytes", g.maxBuf)
					if g.maxBuf >= 1<<20 {
						size = sprintf("%d MiB", g.maxBuf>>20)
					}
					g.notes.add(sprintf("%s has a line longer than %s: it was searched in pieces, so a match that crosses from one piece to the next is not found", quotePath(p), size))
				}
			}
		}
		hadHit := sc.hit
		if !g.searchPieces(&sc, block, eof) {
			return g.stopLate(sc, f, data, off)
		}
		if sc.hit && !hadHit {
			// The first hit: the file is binary if a NUL is anywhere in
			// it, before this point too.
			if i := match.IndexByte(data, 0); i >= 0 {
				return sc, off + int64(i), nil
			}
			if off > 0 {
				if at, err := g.nulBefore(p, off); err != nil || at >= 0 {
					return sc, at, err
				}
			}
			sc.checkedBefore = true
		}
		if eof {
			return sc, -1, nil
		}
		if g.stop || sc.done {
			// Nothing more to show, but a NUL further on still makes the
			// file binary.
			if i := match.IndexByte(rest, 0); i >= 0 {
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

// readFull is io.ReadFull on an open file, except that the end of the
// file before b is full is io.EOF whatever was read: it calls f.Read
// directly, where io.ReadFull would first make an io.Reader of f (a
// runtime lookup, per file, under wasm).
func readFull(f fs.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
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
		cut := match.LastNewline(block[:piece]) + 1
		if cut == 0 {
			i := match.IndexByte(block[piece:], '\n')
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
		if g.late {
			return false
		}
		if g.stop || sc.done {
			return true
		}
		if g.dl.passed() {
			return false
		}
	}
	g.searchBlock(sc, block, last)
	if g.late {
		return false
	}
	return last || !g.dl.passed() // a file read whole in one block costs no look
}

// lateNULScan is how much of a file grep stopped at its deadline still
// reads for a NUL byte, to know whether it may show the hits it found:
// IndexByte takes milliseconds over it; the reads stop sooner when half
// the deadline's margin is spent (deadline.graceLeft).
const lateNULScan = 64 << 20

// stopLate ends the search of a file at the deadline. Hits found so far
// are kept when the file is known not to be binary: data (read from
// offset off) and up to lateNULScan bytes more are looked at for a NUL
// byte; past that, sc.unknown says the hits cannot be shown.
func (g *grepper) stopLate(sc fileScan, f fs.File, data []byte, off int64) (fileScan, int64, error) {
	g.late = true
	if !sc.hit {
		return sc, -1, nil
	}
	if i := match.IndexByte(data, 0); i >= 0 {
		return sc, off + int64(i), nil
	}
	if off > 0 && !sc.checkedBefore {
		if at, err := g.nulBefore(sc.path, off); err != nil || at >= 0 {
			return sc, at, err
		}
	}
	base := off + int64(len(data))
	for left := int64(lateNULScan); ; {
		if !g.dl.graceLeft() || left <= 0 {
			var one [1]byte
			n, _ := io.ReadFull(f, one[:])
			sc.unknown = n > 0
			return sc, -1, nil
		}
		n, err := f.Read(g.buf[:min(int64(len(g.buf)), left)])
		if i := match.IndexByte(g.buf[:n], 0); i >= 0 {
			return sc, base + int64(i), nil
		}
		base += int64(n)
		left -= int64(n)
		if errors.Is(err, io.EOF) {
			return sc, -1, nil
		}
		if err != nil {
			return sc, -1, err
		}
	}
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
		if i := match.IndexByte(buf[:n], 0); i >= 0 {
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
	if g.mode == proto.GrepCount && g.m.EveryLine() && !sc.midLine && (last || len(block) == 0 || block[len(block)-1] == '\n') {
		// Every line matches (`^`, `.*`): its count is its lines, the
		// last one without a newline at the end of the file included.
		n := countNewlines(block)
		if len(block) > 0 && block[len(block)-1] != '\n' {
			n++
			sc.tailHit = true
		}
		sc.count += n
		sc.hit = sc.hit || n > 0
		return
	}
	tail := false // the block's last line has a hit
	for pos := 0; pos < len(block) && !g.stop && !sc.done; {
		start, end, ok := g.next(sc, block, pos)
		if !ok {
			break
		}
		pos = end + 1
		if g.strict != nil && !utf8.Valid(block[start:end]) {
			if hit, ok := g.strict.matches(block[start:end]); ok && !hit {
				continue // matched only by taking an invalid byte for U+FFFD (see strictMatcher)
			}
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
	if g.m.Stopped() {
		g.late = true // the deadline passed inside the block
		return
	}
	if n := len(block); n > 0 && block[n-1] != '\n' {
		// A piece of a line longer than the largest buffer: the next
		// block goes on with its last line.
		if match.IndexByte(block, '\n') >= 0 || !sc.midLine {
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

// next finds the first matching line of block at or after pos. A block
// that starts inside a line longer than the largest buffer begins with the
// rest of that line, where ^ cannot match; one that ends inside such a line
// ends with a piece of it, where $ cannot match: those two are decided by
// the pattern without those anchors (match.Matcher.Piece).
func (g *grepper) next(sc *fileScan, block []byte, pos int) (start, end int, ok bool) {
	head := -1 // the end of the line's rest that starts the block
	if sc.midLine {
		if head = match.IndexByte(block, '\n'); head < 0 {
			head = len(block)
		}
	}
	tail := len(block) // the start of the unfinished line that ends it
	if !sc.last && len(block) > 0 && block[len(block)-1] != '\n' {
		tail = match.LastNewline(block) + 1
	}
	if head < 0 && tail == len(block) {
		s, e, ok := g.m.Next(block[pos:])
		return pos + s, pos + e, ok
	}
	if pos == 0 && head >= 0 {
		if _, _, ok := g.m.Piece(true, head == len(block) && tail == 0).Next(block[:head]); ok {
			return 0, head, true
		}
		pos = head + 1
	}
	if pos < tail {
		if s, e, ok := g.m.Next(block[pos:tail]); ok {
			return pos + s, pos + e, true
		}
		pos = tail
	}
	if pos == tail && tail < len(block) && (head < 0 || tail > 0) {
		if _, _, ok := g.m.Piece(false, true).Next(block[tail:]); ok {
			return tail, len(block), true
		}
	}
	return 0, 0, false
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
		if e := match.IndexByte(block[sc.counted:limit], '\n'); e >= 0 {
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
	if g.quotedOf != p {
		g.quotedOf, g.quoted = p, quotePath(p) // once a file, not once a line
	}
	g.out = append(g.out, g.quoted...)
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
