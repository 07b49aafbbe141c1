package confine

import (
	"io"
	"io/fs"
	"path"
	"syscall"
	"time"
)

// statInfo is an fs.FileInfo made straight from fstat, so that describing a
// file needs no *os.File around its descriptor. Sys returns the
// *syscall.Stat_t, as os's FileInfo does (wazero reads inodes from it).
type statInfo struct {
	name string
	st   syscall.Stat_t
}

// fstat describes the open descriptor fd, named rel.
func fstat(fd int, rel string) (*statInfo, error) {
	fi := &statInfo{name: path.Base(rel)}
	for {
		err := syscall.Fstat(fd, &fi.st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "fstat", Path: rel, Err: err}
		}
		return fi, nil
	}
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }
func (s *statInfo) id() [2]uint64      { return [2]uint64{uint64(s.st.Dev), uint64(s.st.Ino)} }

// Mode converts st_mode as os does (os/stat_linux.go).
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFREG:
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	default:
		m |= fs.ModeIrregular
	}
	if s.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// rawFile is a regular file open read-only on a bare descriptor. Its
// owner (wazero's file table, or the caller of FS.Open) closes it; one
// guest instance uses it from one goroutine at a time, as wazero does.
type rawFile struct {
	fd  int // -1 once closed, so a second Close cannot close a reused fd
	rel string
	// size is the file's size when it was opened, pos the offset of the
	// next Read, atEnd whether a Read came up short at or past size: the
	// file ended then, and the next Read says so without asking the
	// kernel (a grep reads most files in one read, and then once more
	// only to hear of the end). A file that grows after that read looks
	// as it was then, as if read a moment sooner; a Seek asks again. A
	// file whose size says nothing (0, as /proc's) is always asked.
	size, pos int64
	atEnd     bool
	// info is fstat's when it was opened, if it was taken (the file's
	// identity, for the redacted view's memory).
	info *statInfo
}

func (r *rawFile) err(op string, err error) error {
	return &fs.PathError{Op: op, Path: r.rel, Err: err}
}

func (r *rawFile) Read(p []byte) (int, error) {
	if r.fd < 0 {
		return 0, r.err("read", fs.ErrClosed)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.atEnd {
		return 0, io.EOF
	}
	for {
		n, err := syscall.Read(r.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, r.err("read", err)
		case n == 0:
			return 0, io.EOF
		}
		r.pos += int64(n)
		r.atEnd = n < len(p) && r.size > 0 && r.pos >= r.size
		return n, nil
	}
}

// ReadAt reads len(p) bytes unless the file ends first, as io.ReaderAt
// requires.
func (r *rawFile) ReadAt(p []byte, off int64) (int, error) {
	if r.fd < 0 {
		return 0, r.err("read", fs.ErrClosed)
	}
	if off < 0 {
		return 0, r.err("readat", syscall.EINVAL)
	}
	done := 0
	for done < len(p) {
		n, err := syscall.Pread(r.fd, p[done:], off+int64(done))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return done, r.err("read", err)
		case n == 0:
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}

func (r *rawFile) Seek(off int64, whence int) (int64, error) {
	if r.fd < 0 {
		return 0, r.err("seek", fs.ErrClosed)
	}
	n, err := syscall.Seek(r.fd, off, whence)
	if err != nil {
		return 0, r.err("seek", err)
	}
	r.pos, r.atEnd = n, false
	return n, nil
}

func (r *rawFile) Stat() (fs.FileInfo, error) {
	if r.fd < 0 {
		return nil, r.err("stat", fs.ErrClosed)
	}
	return fstat(r.fd, r.rel)
}

func (r *rawFile) ReadDir(int) ([]fs.DirEntry, error) {
	return nil, r.err("readdirent", syscall.ENOTDIR)
}

func (r *rawFile) Close() error {
	if r.fd < 0 {
		return r.err("close", fs.ErrClosed)
	}
	fd := r.fd
	r.fd = -1
	if err := syscall.Close(fd); err != nil {
		return r.err("close", err)
	}
	return nil
}

// openedSize is the file's size when it was opened (ReadFiles).
func (r *rawFile) openedSize() int64 { return r.size }

// opened is fstat's description of the file when it was opened, if it
// was taken then.
func (r *rawFile) opened() (fs.FileInfo, bool) { return r.info, r.info != nil }
