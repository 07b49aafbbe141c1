package confine

import (
	"io"
	"io/fs"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/moatdev/moat/host/redact"
)

// The redacted view. With a redactor (SetRedactor), every regular file
// the view opens is served as host/redact sees it: each secret found in
// the whole file (redact.FindFile and redact.Scanner: by its name and all
// of its bytes, in bounded memory) replaced by its mark, "[redacted: RULE-ID]". Whatever
// reads the file, at any offset, in any window, through path_open or the
// batch read (ReadFiles), reads the marks and never a secret's bytes: so
// a grep matches the redacted view and no pattern can tell anything about
// what a mark hides.
//
// A file of at most viewInMemory bytes is read whole once, found in, and
// served from memory (what was found in is exactly what is served); a
// larger one is found in piece by piece as far as it is read
// (redact.Scanner) and served from the file with the marks spliced in at
// the offsets found. An open file's size (fstat) is its view's (a large
// file's once read to its end, before that the file's); a path's (stat,
// lstat) is the file's on disk.
//
// What was found in a file is remembered by the file's identity (device,
// inode, size, modification and change times, and its name, which decides
// its shape) for the FS's life, so a session's second grep over a tree
// does not look again at files that did not change: a write changes the
// change time, and the gate's writes make a new inode. What an FS found
// can be kept past its life, in the findings cache (findcache.go: Fresh,
// Recall), for a later process.
//
// Only a file that is settled is remembered: both its times at least
// RacyMargin older than the finding began (findings.put). The kernel
// stamps a write with a coarse clock (a tick of the scheduler, up to
// 10 ms), so a file written twice within one tick, to the same size,
// keeps its identity: had the first content been remembered, the second,
// a secret, say, would be served as it is (git's "racily clean" index
// entry). A file written since, or in the future, is found in each time
// it is opened, until it settles. The margin is 2 s rather than a tick
// so that a file server whose clock is behind this machine's by less
// than that stamps no racy file as settled. What no time shows is not
// caught: a write through a shared mapping to a page already written
// since the file's times were set, or a file system whose times stay
// put (one that keeps no change time at all, 0, is never settled).

// viewInMemory is the largest file read whole into memory for its view.
const viewInMemory = 1 << 20

// RacyMargin is how much older than the finding a file's times must be
// for its findings to be remembered (findings.put). Until then each read
// of the file searches it for secrets again: cmd/moat-bench waits this
// long after writing its inputs, so that it times what a tree written
// before the session costs.
const RacyMargin = 2 * time.Second

// maxRemembered bounds the files whose findings an FS remembers; past it
// the memory starts again empty. A file with more than
// maxRememberedFindings findings is not remembered.
const (
	maxRemembered         = 1 << 17
	maxRememberedFindings = 1 << 10
)

// SetRedactor makes f serve the redacted view of every regular file (nil:
// the files as they are). Call it before f is used.
func (f *FS) SetRedactor(r *redact.Redactor) {
	for _, s := range f.subs {
		s.SetRedactor(r)
	}
	f.red = r
	f.seen = &findings{m: map[fileKey]memo{}, now: time.Now}
	f.bufs = &viewBufs{}
}

// viewBufs keeps the buffers of the views held in memory for the next
// file's, by size class (powers of two up to viewInMemory): a grep reads
// thousands of files whole, and a new buffer for each (114 MB over Go's
// source tree) made the garbage collector grow the heap, and so the
// process, by the size of many of them.
type viewBufs struct {
	class [viewClasses]sync.Pool
}

const (
	minViewClass = 12                // 4 KiB
	viewClasses  = 21 - minViewClass // up to viewInMemory
)

// classOf is the size class a buffer of n bytes comes from.
func classOf(n int) int {
	c := 0
	for 1<<(c+minViewClass) < n {
		c++
	}
	return c
}

// get is a buffer of n bytes (n at most viewInMemory), of its class's
// capacity.
func (v *viewBufs) get(n int) []byte {
	c := classOf(n)
	if b, ok := v.class[c].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, 1<<(c+minViewClass))
}

// put gives back a buffer get returned, which nothing may read again.
func (v *viewBufs) put(b []byte) {
	c := classOf(cap(b))
	if cap(b) != 1<<(c+minViewClass) {
		return // not one of get's
	}
	v.class[c].Put(&b)
}

// findings remembers each file's findings by its identity.
type findings struct {
	mu sync.Mutex
	m  map[fileKey]memo
	// now is the clock a finding's start is read from (time.Now; a
	// test's own, to place a file's times against it).
	now func() time.Time
	// made are the files remembered whole since the last fresh, in the
	// order remembered (findcache.go), some perhaps twice or no longer
	// in m.
	made []fileKey
}

// memo is what was found in a file: all of it, or (partial) in its first
// done bytes, a large file a reader left before its end (a grep stops at
// a binary file's first NUL), with where its scan stood.
type memo struct {
	found   []redact.Finding
	partial bool
	done    int64
	state   redact.ScanState
}

func (s *findings) get(k fileKey) (memo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok
}

// put remembers v, what was found in the file k from the time start on
// (read before any of its bytes), unless the file is not settled (the
// doc at the top): either of its times less than RacyMargin before start.
func (s *findings) put(k fileKey, v memo, start time.Time) {
	if len(v.found) > maxRememberedFindings {
		return // found in again: a file made of secrets takes no more memory than while it is open
	}
	if !k.settled(start) {
		return // found in again when next opened
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remember(k, v)
	if !v.partial {
		s.made = append(s.made, k)
	}
}

// remember is put without its checks; s.mu is held.
func (s *findings) remember(k fileKey, v memo) {
	if len(s.m) >= maxRemembered {
		clear(s.m)
		s.made = s.made[:0]
	}
	s.m[k] = v
}

// recall remembers v, found in the file k by another FS (findcache.go),
// which put's checks admitted there.
func (s *findings) recall(k fileKey, v memo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remember(k, v)
}

// fresh appends the files remembered whole since the last call, each
// once, with root as their root's place, to out.
func (s *findings) fresh(root int, out []entry) []entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := make(map[fileKey]bool, len(s.made))
	for _, k := range s.made {
		if v, ok := s.m[k]; ok && !v.partial && !done[k] {
			done[k] = true
			out = append(out, entry{root: root, key: k, found: v.found})
		}
	}
	s.made = nil
	return out
}

// fileKey is a file's identity and state, and the name it was opened by.
type fileKey struct {
	dev, ino, size uint64
	mtime, ctime   int64 // ns since the epoch
	name           string
}

// settled reports whether the file's times are both at least RacyMargin
// older than start: a write after start, stamped by the kernel's coarse
// clock, cannot carry them. A change time at or before the epoch, which
// no write can give (no call sets it), is a file system that keeps none:
// nothing there is settled.
func (k fileKey) settled(start time.Time) bool {
	before := start.Add(-RacyMargin).UnixNano()
	return k.mtime < before && k.ctime < before && k.ctime > 0
}

// view is h (a regular file, opened as rel and described by fi) as the
// redactor shows it: h itself when it holds no secret and is not read
// whole, else a handle of the view, which owns h. On an error h is closed.
func (f *FS) view(h handle, rel string, fi fs.FileInfo) (handle, error) {
	key, keyed := keyOf(fi, rel)
	var m memo
	known := false
	if keyed {
		m, known = f.seen.get(key)
		if known && !m.partial && len(m.found) == 0 {
			return h, nil
		}
	}
	found := m.found
	size := fi.Size()
	start := f.seen.now() // before any byte is read
	if size <= viewInMemory {
		var data []byte
		var err error
		if size == 0 {
			// A size that says nothing (a FUSE file's, say): what it
			// holds, up to viewInMemory.
			data, err = io.ReadAll(io.NewSectionReader(h, 0, viewInMemory))
		} else {
			data = f.bufs.get(int(size))
			var n int
			n, err = h.ReadAt(data, 0)
			data = data[:n]
		}
		if err != nil && err != io.EOF {
			f.bufs.put(data)
			h.Close()
			return nil, err
		}
		n := len(data)
		if !known || m.partial {
			found = f.red.FindFile(rel, data)
			if keyed && int64(n) == size {
				f.seen.put(key, memo{found: found}, start)
			}
		}
		h.Close()
		if len(found) > 0 {
			if !fits(found, len(data)) {
				f.bufs.put(data)
				return nil, ErrChanged
			}
			view := redact.View(data, found)
			f.bufs.put(data)
			data = view
		}
		return &memFile{data: data, fi: sized(fi, int64(len(data))), bufs: f.bufs}, nil
	}
	sp := &splice{h: h, fi: fi, raw: size}
	if known && !fits(found, int(size)) {
		h.Close()
		return nil, ErrChanged
	}
	if known && !m.partial {
		sp.add(found, size)
		sp.complete = true
		return sp, nil
	}
	// Found in as it is read: a reader is never kept waiting for more of
	// the file than it reads (a 1 TiB sparse file, a grep that stops at
	// its deadline). What was found is remembered when the file is
	// closed, all of it or as far as it was read, and a later open goes
	// on from there.
	if known {
		sp.add(found, m.done)
		sp.sc = f.red.ResumeScanner(rel, h, size, m.state)
		sp.all = append([]redact.Finding(nil), found...)
	} else {
		sp.sc = f.red.NewScanner(rel, h, size)
	}
	if keyed {
		sp.remember = func(v memo) { f.seen.put(key, v, start) }
	}
	return sp, nil
}

// fits reports whether findings lie within a file of n bytes.
func fits(found []redact.Finding, n int) bool {
	return len(found) == 0 || found[len(found)-1].End <= n
}

// sizedInfo is a FileInfo with the view's size, for wazero too (its
// Stat_t, from Sys, says the same).
type sizedInfo struct {
	fs.FileInfo
	st sys.Stat_t
}

func sized(fi fs.FileInfo, n int64) *sizedInfo {
	s := &sizedInfo{FileInfo: fi, st: sys.NewStat_t(fi)}
	s.st.Size = n
	return s
}

func (s *sizedInfo) Size() int64 { return s.st.Size }
func (s *sizedInfo) Sys() any    { return &s.st }

// memFile is a view held in memory.
type memFile struct {
	data   []byte
	bufs   *viewBufs // where data goes back when closed
	pos    int64
	fi     *sizedInfo
	closed bool
}

func (m *memFile) Read(p []byte) (int, error) {
	if m.closed {
		return 0, fs.ErrClosed
	}
	if m.pos >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[m.pos:])
	m.pos += int64(n)
	return n, nil
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if m.closed {
		return 0, fs.ErrClosed
	}
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memFile) Seek(off int64, whence int) (int64, error) {
	n, err := seekTo(m.pos, int64(len(m.data)), off, whence)
	if err == nil {
		m.pos = n
	}
	return n, err
}

func seekTo(pos, size, off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += pos
	case io.SeekEnd:
		off += size
	default:
		return 0, syscall.EINVAL
	}
	if off < 0 {
		return 0, syscall.EINVAL
	}
	return off, nil
}

func (m *memFile) Stat() (fs.FileInfo, error)         { return m.fi, nil }
func (m *memFile) ReadDir(int) ([]fs.DirEntry, error) { return nil, syscall.ENOTDIR }
func (m *memFile) Close() error {
	if m.closed {
		return fs.ErrClosed
	}
	m.bufs.put(m.data)
	m.closed, m.data = true, nil
	return nil
}

// openedSize is the view's size (ReadFiles).
func (m *memFile) openedSize() int64 { return int64(len(m.data)) }

// splice is a large file's view: the file's bytes, each finding's
// replaced by its mark, read from the file at the offsets found. The file
// is found in a piece at a time (sc), only as far as it is read.
type splice struct {
	h   handle
	fi  fs.FileInfo
	raw int64 // the file's size when it was opened
	// segs cover the view's first size bytes, the file's first done.
	segs       []segment
	size, done int64
	complete   bool // found in to its end
	sc         *redact.Scanner
	all        []redact.Finding
	remember   func(memo) // called with what was found once complete, or when closed; nil: not remembered
	pos        int64
}

// segment is a run of the view starting at at: the file's bytes from
// from, or a mark.
type segment struct {
	at, from, n int64
	mark        string
}

// add appends found (in order, from s.done on) and the file's bytes up to
// decided to the view.
func (s *splice) add(found []redact.Finding, decided int64) {
	for _, f := range found {
		s.plain(int64(f.Start))
		m := redact.Mark(f.Rule)
		s.segs = append(s.segs, segment{at: s.size, n: int64(len(m)), mark: m})
		s.size += int64(len(m))
		s.done = int64(f.End)
	}
	s.plain(decided)
}

// plain appends the file's bytes from s.done to to.
func (s *splice) plain(to int64) {
	n := to - s.done
	if n <= 0 {
		return
	}
	if k := len(s.segs); k > 0 && s.segs[k-1].mark == "" && s.segs[k-1].from+s.segs[k-1].n == s.done {
		s.segs[k-1].n += n
	} else {
		s.segs = append(s.segs, segment{at: s.size, from: s.done, n: n})
	}
	s.size += n
	s.done = to
}

// extend finds in the next piece of the file.
func (s *splice) extend() error {
	found, decided, err := s.sc.Next()
	if err != nil && err != io.EOF {
		return err
	}
	s.add(found, decided)
	if s.remember != nil {
		s.all = append(s.all, found...)
	}
	if err == io.EOF {
		s.complete, s.sc = true, nil
		if s.remember != nil {
			s.remember(memo{found: s.all})
			s.remember, s.all = nil, nil
		}
	}
	return nil
}

func (s *splice) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	for !s.complete && s.size < off+int64(len(p)) {
		if err := s.extend(); err != nil {
			return 0, err
		}
	}
	done := 0
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].at+s.segs[i].n > off })
	for ; i < len(s.segs) && done < len(p); i++ {
		g := s.segs[i]
		skip := off + int64(done) - g.at
		want := min(int64(len(p)-done), g.n-skip)
		if g.mark != "" {
			done += copy(p[done:done+int(want)], g.mark[skip:])
			continue
		}
		n, err := s.h.ReadAt(p[done:done+int(want)], g.from+skip)
		done += n
		if err != nil && (err != io.EOF || int64(n) < want) {
			if err == io.EOF {
				return done, io.EOF // the file shrank
			}
			return done, err
		}
	}
	if done < len(p) {
		return done, io.EOF
	}
	return done, nil
}

func (s *splice) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := s.ReadAt(p, s.pos)
	s.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (s *splice) Seek(off int64, whence int) (int64, error) {
	end := s.size
	if whence == io.SeekEnd {
		for !s.complete {
			if err := s.extend(); err != nil {
				return 0, err
			}
		}
		end = s.size
	}
	n, err := seekTo(s.pos, end, off, whence)
	if err == nil {
		s.pos = n
	}
	return n, err
}

// Stat describes the view: its size once the file was found in to its
// end, until then the file's (the guest reads a large file to its end,
// not to its size).
func (s *splice) Stat() (fs.FileInfo, error) {
	if s.complete {
		return sized(s.fi, s.size), nil
	}
	return sized(s.fi, s.raw), nil
}

func (s *splice) ReadDir(int) ([]fs.DirEntry, error) { return nil, syscall.ENOTDIR }
func (s *splice) Close() error {
	if s.remember != nil && s.sc != nil && s.done > 0 {
		s.remember(memo{found: s.all, partial: true, done: s.done, state: s.sc.State()})
	}
	s.sc, s.remember = nil, nil
	return s.h.Close()
}
func (s *splice) openedSize() int64 { st, _ := s.Stat(); return st.Size() }

// keyOf is fi's identity, for a file opened as rel; false where the
// system gives no inode number (then nothing is remembered).
func keyOf(fi fs.FileInfo, rel string) (fileKey, bool) {
	st := sys.NewStat_t(fi)
	return fileKey{dev: st.Dev, ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim, ctime: st.Ctim, name: rel}, st.Ino != 0
}
