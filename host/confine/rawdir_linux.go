package confine

import (
	"encoding/binary"
	"io"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The two struct stats are the same size (Info converts between them).
var (
	_ [unsafe.Sizeof(unix.Stat_t{}) - unsafe.Sizeof(syscall.Stat_t{})]byte
	_ [unsafe.Sizeof(syscall.Stat_t{}) - unsafe.Sizeof(unix.Stat_t{})]byte
)

// rawDir is a folder open read-only on a bare descriptor, listed with
// getdents64 straight into entries: one slice of entries and one string
// of names for each batch the kernel fills, where os.File.ReadDir
// allocates an entry and a name for every one (two allocations for each
// of a 100,000-entry folder's names, in every guest that lists it). Like
// rawFile, one guest instance uses it from one goroutine at a time.
type rawDir struct {
	rawFile
	bufs    *sync.Pool    // where buf comes from and goes back to on Close (of *[dirBuf]byte); nil: its own
	buf     *[dirBuf]byte // getdents64's, from the first fill to Close
	pending []dirEnt      // listed, not yet returned
	eof     bool
}

// dirBuf is how many bytes one getdents64 fills: about a thousand
// entries of a source tree. A walk opens thousands of folders, so the
// buffers are pooled (newDirBufs): one for each folder a walk made 70 MB
// of garbage over a tree of 2,000 folders, most of a glob's allocations.
const dirBuf = 32 << 10

// newDirBufs is a pool of rawDir buffers, for one resolver's folders.
func newDirBufs() *sync.Pool {
	return &sync.Pool{New: func() any { return new([dirBuf]byte) }}
}

// Close closes the folder and gives its buffer back.
func (d *rawDir) Close() error {
	err := d.rawFile.Close()
	if d.buf != nil && d.bufs != nil {
		d.bufs.Put(d.buf)
	}
	d.buf = nil
	return err
}

// ReadDir is os.File.ReadDir: up to n entries (all with n <= 0) in the
// folder's own order, without "." and "..", and io.EOF once a call with
// n > 0 finds none left.
func (d *rawDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.fd < 0 {
		return nil, d.err("readdirent", fs.ErrClosed)
	}
	var out []fs.DirEntry
	for n <= 0 || len(out) < n {
		if len(d.pending) == 0 {
			if d.eof {
				break
			}
			if err := d.fill(); err != nil {
				return out, err
			}
			continue
		}
		take := len(d.pending)
		if n > 0 {
			take = min(take, n-len(out))
		}
		if out == nil {
			out = make([]fs.DirEntry, 0, take)
		}
		for i := range d.pending[:take] {
			out = append(out, &d.pending[i])
		}
		d.pending = d.pending[take:]
	}
	if n > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// Seek moves the folder's position as lseek does, and forgets the batch
// read ahead: a seek to 0 lists the folder again from its start.
func (d *rawDir) Seek(off int64, whence int) (int64, error) {
	n, err := d.rawFile.Seek(off, whence)
	if err == nil {
		d.pending, d.eof = nil, false
	}
	return n, err
}

// fill reads the next batch into pending, or sets eof.
func (d *rawDir) fill() error {
	if d.buf == nil {
		if d.bufs != nil {
			d.buf = d.bufs.Get().(*[dirBuf]byte)
		} else {
			d.buf = new([dirBuf]byte)
		}
	}
	var m int
	for {
		var err error
		m, err = unix.Getdents(d.fd, d.buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			d.eof = true
			return d.err("readdirent", err)
		}
		break
	}
	if m <= 0 {
		d.eof = true
		return nil
	}
	// A linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1),
	// then the name, NUL-terminated within d_reclen.
	b := d.buf[:m]
	count, size := 0, 0
	for at := 0; at+19 <= len(b); {
		reclen := int(binary.NativeEndian.Uint16(b[at+16:]))
		if reclen == 0 || at+reclen > len(b) {
			break
		}
		count++
		size += nameLen(b[at+19 : at+reclen])
		at += reclen
	}
	var names strings.Builder
	names.Grow(size)
	for at := 0; at+19 <= len(b); {
		reclen := int(binary.NativeEndian.Uint16(b[at+16:]))
		if reclen == 0 || at+reclen > len(b) {
			break
		}
		nm := b[at+19 : at+reclen]
		names.Write(nm[:nameLen(nm)])
		at += reclen
	}
	all := names.String()
	ents := make([]dirEnt, 0, count)
	for at, off := 0, 0; at+19 <= len(b); {
		reclen := int(binary.NativeEndian.Uint16(b[at+16:]))
		if reclen == 0 || at+reclen > len(b) {
			break
		}
		l := nameLen(b[at+19 : at+reclen])
		nm := all[off : off+l]
		typ := b[at+18]
		at += reclen
		off += l
		if nm == "." || nm == ".." {
			continue
		}
		e := dirEnt{name: nm, dir: d}
		if t, known := direntType(typ); known {
			e.typ = t
		} else {
			fi, err := e.Info()
			if err != nil {
				continue // gone since it was listed, as os treats it
			}
			e.typ = fi.Mode().Type()
		}
		ents = append(ents, e)
	}
	d.pending = ents
	return nil
}

// nameLen is the length of the NUL-terminated name at the start of b.
func nameLen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// direntType maps a d_type to fs.FileMode's type bits as os does; known
// is false for DT_UNKNOWN (and any other), which takes an lstat.
func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// dirEnt is one entry of a rawDir's listing.
type dirEnt struct {
	name string
	typ  fs.FileMode
	dir  *rawDir
}

func (e *dirEnt) Name() string      { return e.name }
func (e *dirEnt) IsDir() bool       { return e.typ.IsDir() }
func (e *dirEnt) Type() fs.FileMode { return e.typ }
func (e *dirEnt) String() string    { return fs.FormatDirEntry(e) }

// Info lstats the entry relative to its open folder (the folder must still
// be open).
func (e *dirEnt) Info() (fs.FileInfo, error) {
	if e.dir.fd < 0 {
		return nil, e.dir.err("lstat", fs.ErrClosed)
	}
	fi := &statInfo{name: e.name}
	for {
		// unix.Stat_t and syscall.Stat_t are both the kernel's struct stat
		// (same size, asserted below); syscall has no Fstatat everywhere.
		err := unix.Fstatat(e.dir.fd, e.name, (*unix.Stat_t)(unsafe.Pointer(&fi.st)), unix.AT_SYMLINK_NOFOLLOW)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: e.dir.rel + "/" + e.name, Err: err}
		}
		return fi, nil
	}
}

// openChild opens the regular file name, one component, in this folder:
// openat2 beneath the folder's descriptor, never through a symlink
// (ReadFiles). Anything but a regular file is closed and refused
// (ErrSpecial).
func (d *rawDir) openChild(name string) (handle, error) {
	if d.fd < 0 {
		return nil, d.err("open", fs.ErrClosed)
	}
	var fd int
	for {
		var err error
		fd, err = unix.Openat2(d.fd, name, &unix.OpenHow{
			Flags:   uint64(unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW),
			Resolve: resolveFlags,
		})
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "openat2", Path: name, Err: err}
		}
		break
	}
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(fd, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return nil, &fs.PathError{Op: "fstat", Path: name, Err: err}
		}
		break
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		unix.Close(fd)
		return nil, ErrSpecial
	}
	return &rawFile{fd: fd, rel: name, size: st.Size, info: &statInfo{name: name, st: st}}, nil
}
