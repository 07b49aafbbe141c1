package tools

import (
	"io"
	"io/fs"
	"strings"
)

// fileBatcher is a file system that reads a batch of a folder's small
// files whole in one call (wasifs.FS.ReadFiles, one host call where the
// guest runs).
type fileBatcher interface {
	ReadFiles(dir string, names []string, buf []byte, sizes []int32) int
}

// Read-ahead sizes: a batch is at most aheadNames files and aheadBuf
// bytes (a larger file is opened as usual), in each of at most aheadDepth
// folders on the walk's way down.
const (
	aheadNames = 64
	aheadBuf   = 128 << 10
	aheadDepth = 32
)

// readAhead reads the files a walk is about to search before it gets to
// them, a batch at a time, so that a grep of many small files makes one
// host call for dozens of them instead of three or four each. The walk
// tells it each folder's files as it lists them (listed); open then serves
// a file from the batch that holds it, reading the next batch when the
// walk gets past the last. Anything it cannot serve (a file the walk did
// not announce, one the host would not read whole) is opened as usual, so
// the walk sees the same files either way; a file is read at most a batch
// earlier than the walk would have read it.
type readAhead struct {
	fsys   fileBatcher
	levels []aheadLevel // by the folder's depth
	file   memFile      // the file open returned last (the walk reads one at a time)
}

// aheadLevel is the read-ahead of one folder on the walk's way down.
type aheadLevel struct {
	dir    string
	names  []string // the folder's files the walk may search, in its order
	pos    int      // where the walk is in names
	lo, hi int      // names[lo:hi] are in buf
	offs   []int    // names[lo+i] is buf[offs[i]:offs[i]+sizes[i]] ...
	sizes  []int32  // ... when sizes[i] >= 0
	buf    []byte
}

// newReadAhead is the read-ahead of fsys, or nil if it cannot batch.
func newReadAhead(fsys fs.FS) *readAhead {
	b, ok := fsys.(fileBatcher)
	if !ok {
		return nil
	}
	return &readAhead{fsys: b}
}

// depth is the level of folder dir (as the walk names it).
func depth(dir string) int {
	if dir == "." || dir == "" {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// listed tells the read-ahead the files of folder dir the walk may search,
// in the order it will.
func (ra *readAhead) listed(dir string, names []string) {
	d := depth(dir)
	if ra == nil || d >= aheadDepth {
		return
	}
	if d >= cap(ra.levels) {
		ra.levels = append(ra.levels[:cap(ra.levels)], make([]aheadLevel, d+1-cap(ra.levels))...)
	}
	// The folders below d are done with; their levels keep their
	// buffers for the next folders that deep.
	ra.levels = ra.levels[:d+1]
	l := &ra.levels[d]
	l.dir, l.names, l.pos, l.lo, l.hi = dir, names, 0, 0, 0
}

// open is the file p from a batch, if the read-ahead has or can read it.
func (ra *readAhead) open(p string) (fs.File, bool) {
	if ra == nil {
		return nil, false
	}
	dir, name := ".", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, name = p[:i], p[i+1:]
	}
	l := ra.level(dir)
	if l == nil {
		return nil, false
	}
	// The walk goes through names in order, passing over those it leaves
	// out (ignored files): look a batch ahead at most.
	i := l.pos
	for i < len(l.names) && i < l.pos+aheadNames && l.names[i] != name {
		i++
	}
	if i >= len(l.names) || l.names[i] != name {
		return nil, false
	}
	l.pos = i + 1
	if i < l.lo || i >= l.hi {
		ra.fill(l, i)
	}
	if i < l.lo || i >= l.hi || l.sizes[i-l.lo] < 0 {
		return nil, false
	}
	at, n := l.offs[i-l.lo], int(l.sizes[i-l.lo])
	ra.file = memFile{b: l.buf[at : at+n : at+n]}
	return &ra.file, true
}

// level is the read-ahead of folder dir, or nil: most often the deepest
// (the folder listed last), else the one at dir's depth, if it is dir's.
func (ra *readAhead) level(dir string) *aheadLevel {
	n := len(ra.levels)
	if n == 0 {
		return nil
	}
	if l := &ra.levels[n-1]; l.dir == dir {
		return l
	}
	if d := depth(dir); d < n && ra.levels[d].dir == dir {
		return &ra.levels[d]
	}
	return nil
}

// fill reads the batch of l's names from i on.
func (ra *readAhead) fill(l *aheadLevel, i int) {
	if l.buf == nil {
		l.buf = make([]byte, aheadBuf)
		l.sizes = make([]int32, aheadNames)
		l.offs = make([]int, aheadNames)
	}
	names := l.names[i:min(len(l.names), i+aheadNames)]
	n := ra.fsys.ReadFiles(l.dir, names, l.buf, l.sizes)
	l.lo, l.hi = i, i+n
	at := 0
	for k := range n {
		l.offs[k] = at
		if l.sizes[k] > 0 {
			at += int(l.sizes[k])
		}
	}
}

// memFile is a file read whole by the read-ahead: its Read copies out of
// the batch's buffer.
type memFile struct {
	b   []byte
	off int
}

func (m *memFile) Read(p []byte) (int, error) {
	if m.off >= len(m.b) {
		return 0, io.EOF
	}
	n := copy(p, m.b[m.off:])
	m.off += n
	return n, nil
}

func (m *memFile) Close() error               { return nil }
func (m *memFile) Stat() (fs.FileInfo, error) { return nil, fs.ErrInvalid }
