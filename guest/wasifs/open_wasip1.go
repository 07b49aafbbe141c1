//go:build wasip1

package wasifs

import (
	"cmp"
	"encoding/binary"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"github.com/moatdev/moat/guest/proto"
)

// wasiName is name as a WASI path call carries it (proto.WASIPath): wazero
// refuses a path that is not UTF-8.
func wasiName(name string) string { return proto.WASIPath(name) }

// openRoot opens the root folder once, so that Open can hand the host a
// path relative to it as it is: syscall.Open would clean and re-join every
// path against the working directory and search the preopens for it,
// which showed as a tenth of a grep's time in the guest.
func openRoot(root string) int {
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return -1
	}
	return fd
}

// Rights asked for a file opened for reading (wazero does not check them).
const (
	readOnlyRights = syscall.RIGHT_FD_READ | syscall.RIGHT_FD_SEEK | syscall.RIGHT_FD_TELL |
		syscall.RIGHT_FD_ADVISE | syscall.RIGHT_FD_FILESTAT_GET | syscall.RIGHT_FD_READDIR |
		syscall.RIGHT_PATH_OPEN | syscall.RIGHT_PATH_FILESTAT_GET | syscall.RIGHT_PATH_READLINK |
		syscall.RIGHT_FDSTAT_SET_FLAGS
	lookupFollow = 1 // LOOKUP_SYMLINK_FOLLOW
)

//go:wasmimport wasi_snapshot_preview1 path_open
//go:noescape
func pathOpen(dirFD int32, dirflags uint32, path *byte, pathLen uint32, oflags uint32, rightsBase uint64, rightsInheriting uint64, fdflags uint32, fd *int32) syscall.Errno

// open opens name (valid and relative) under the root folder for reading;
// without a root descriptor, by its path from the preopen (full).
func (f *FS) open(name string) (int, error) {
	name = wasiName(name)
	if f.rootFD < 0 || name == "." {
		return syscall.Open(full(f.root, name), syscall.O_RDONLY, 0)
	}
	var fd int32
	if errno := pathOpen(int32(f.rootFD), lookupFollow, unsafe.StringData(name), uint32(len(name)), 0,
		readOnlyRights, readOnlyRights, 0, &fd); errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

//go:wasmimport wasi_snapshot_preview1 fd_readdir
//go:noescape
func fdReaddir(fd int32, buf *byte, bufLen uint32, cookie uint64, nread *uint32) syscall.Errno

// direntSize is the size of a WASI dirent's header: d_next (u64), d_ino
// (u64), d_namlen (u32), d_type (u8) and padding; the name follows.
const direntSize = 24

// readDirBuf is how many bytes one fd_readdir fills: a few thousand
// entries a host call.
const readDirBuf = 64 << 10

// readDir lists the open folder d (name as opened) with fd_readdir
// directly, sorted by name, without the files skipFile (may be nil)
// rules out. os.File.ReadDir allocates an entry and a name
// per entry and locks per entry; here the names of one batch share one
// string and the entries one slice, which under wasm took a fifth off a
// wide tree's walk and half off the memory a wide folder's listing holds.
func (f *FS) readDir(d *file, name string, skipFile func(string) bool) ([]fs.DirEntry, error) {
	r := &dirReader{fd: d.fd, head: &dirHead{fsys: f, dir: name}, skipFile: skipFile}
	var ents []dirent
	var err error
	for !r.eof && err == nil {
		ents, err = r.next(ents)
	}
	f.putDirBuf(r.buf)
	// Sorted by index, not in place: swapping entries (which hold
	// pointers) ran the GC's write barrier on every move while a
	// collection was on, which in a folder of 100,000 files was a tenth of
	// a grep's guest time; an index holds none. Each index carries its
	// name's key (proto.NameKey), which decides most comparisons: sorting
	// by the names alone was a thirteenth of a grep of such a folder.
	type byKey struct {
		key uint64
		i   int32
	}
	idx := make([]byKey, len(ents))
	for i := range idx {
		idx[i] = byKey{proto.NameKey(ents[i].name), int32(i)}
	}
	slices.SortFunc(idx, func(x, y byKey) int {
		if x.key != y.key {
			return cmp.Compare(x.key, y.key)
		}
		return strings.Compare(ents[x.i].name, ents[y.i].name)
	})
	out := make([]fs.DirEntry, len(ents))
	for i, k := range idx {
		out[i] = &ents[k.i]
	}
	return out, err
}

// readDirAll lists the open folder d in its own order, passing over the
// files skipFile (may be nil) rules out before making their entries.
func (f *FS) readDirAll(d *file, skipFile func(string) bool) ([]fs.DirEntry, error) {
	r := &dirReader{fd: d.fd, head: &dirHead{fsys: f, dir: d.name}, skipFile: skipFile}
	var ents []dirent
	var err error
	for !r.eof && err == nil {
		ents, err = r.next(ents)
	}
	f.putDirBuf(r.buf)
	out := make([]fs.DirEntry, len(ents))
	for i := range ents {
		out[i] = &ents[i]
	}
	return out, err
}

// scanDir is ScanDir on the open folder d (name as opened): each batch
// fd_readdir fills is walked once, and fn sees every name in the buffer.
func (f *FS) scanDir(d *file, name string, fn func(string, fs.FileMode)) error {
	r := &dirReader{fd: d.fd, head: &dirHead{fsys: f, dir: name}}
	defer func() { f.putDirBuf(r.buf) }()
	for !r.eof {
		b, err := r.fill()
		if err != nil {
			return err
		}
		r.entries(b, func(_ int, nm string, typ fs.FileMode) {
			if typ == typeUnknown {
				info, err := f.Lstat(joinName(name, nm))
				if err != nil {
					return // gone since it was listed, as os treats it
				}
				typ = info.Mode().Type()
			}
			fn(nm, typ)
		})
	}
	return nil
}

// readDirN is fs.ReadDirFile's ReadDir on d, in the folder's own order,
// with fd_readdir directly as readDir lists.
func (f *FS) readDirN(d *file, n int) ([]fs.DirEntry, error) {
	if d.dir == nil {
		d.dir = &dirReader{fd: d.fd, head: &dirHead{fsys: f, dir: d.name}}
	}
	r := d.dir
	var out []fs.DirEntry
	for n <= 0 || len(out) < n {
		if len(r.pending) == 0 {
			if r.eof {
				break
			}
			ents, err := r.next(nil)
			if err != nil {
				return out, err
			}
			r.pending = ents
			continue
		}
		take := len(r.pending)
		if n > 0 {
			take = min(take, n-len(out))
		}
		for i := range r.pending[:take] {
			out = append(out, &r.pending[i])
		}
		r.pending = r.pending[take:]
	}
	if n > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// dirReader reads a folder's entries with fd_readdir, a batch at a time.
type dirReader struct {
	fd      int
	head    *dirHead
	buf     []byte
	cookie  uint64 // where the next batch starts
	eof     bool
	pending []dirent // read but not yet returned (readDirN)
	// skipFile, if set, passes over files (not folders) by name: see
	// FS.ReadDirAnyOrder.
	skipFile func(name string) bool
	wanted   []wantedEnt // next's, kept from batch to batch
}

// next appends the entries of the next batch to ents (without "." and
// "..").  Entries of a type the host does not give are described by
// Lstat, as os does. The batch is walked once to find the entries to
// make (files skipFile rules out are passed over there, before any string
// is made for them: the test sees the name in the buffer, and must not
// keep it), and once more over those only, to make them.
func (r *dirReader) next(ents []dirent) ([]dirent, error) {
	b, err := r.fill()
	if err != nil {
		return ents, err
	}
	wanted, size := r.wanted[:0], 0
	r.entries(b, func(at int, name string, typ fs.FileMode) {
		if r.skipFile != nil && typ != fs.ModeDir && typ != typeUnknown && r.skipFile(name) {
			return
		}
		wanted = append(wanted, wantedEnt{at, len(name), typ})
		size += len(name)
	})
	r.wanted = wanted
	// One string holds the names of the batch.
	var names strings.Builder
	names.Grow(size)
	for _, w := range wanted {
		names.Write(b[w.at : w.at+w.len])
	}
	all := names.String()
	ents = slices.Grow(ents, len(wanted))
	off := 0
	for _, w := range wanted {
		nm := all[off : off+w.len]
		off += w.len
		e := dirent{head: r.head, name: nm, typ: w.typ}
		if e.typ == typeUnknown {
			info, err := r.head.fsys.Lstat(joinName(r.head.dir, nm))
			if err != nil {
				continue // gone since it was listed, as os treats it
			}
			if e.typ = info.Mode().Type(); e.typ != fs.ModeDir && r.skipFile != nil && r.skipFile(nm) {
				continue // a file after all, and one the caller never wants
			}
		}
		ents = append(ents, e)
	}
	return ents, nil
}

// fill reads the next batch into the reader's buffer, from its cookie on:
// the bytes fd_readdir filled.
func (r *dirReader) fill() ([]byte, error) {
	if r.buf == nil {
		r.buf = r.head.fsys.getDirBuf()
	}
	var n uint32
	if errno := fdReaddir(int32(r.fd), &r.buf[0], uint32(len(r.buf)), r.cookie, &n); errno != 0 {
		r.eof = true
		return nil, &fs.PathError{Op: "readdirent", Path: r.head.dir, Err: errno}
	}
	return r.buf[:n], nil
}

// entries calls fn with each complete entry of the batch b: where its name
// starts in b, the name as it lies there (never "", "." or ".."; fn must
// not keep it) and its type. It moves the reader's cookie past the last
// complete entry, and then sets eof if the host filled less than the
// buffer, or doubles the buffer if not even one entry fitted in it.
func (r *dirReader) entries(b []byte, fn func(at int, name string, typ fs.FileMode)) {
	complete := 0
	for at := 0; at+direntSize <= len(b); complete++ {
		namlen := int(le32(b[at+16:]))
		if at+direntSize+namlen > len(b) {
			break // cut off at the buffer's end: read again from its cookie
		}
		r.cookie = le64(b[at:])
		typ := fileType(b[at+20])
		start := at + direntSize
		at = start + namlen
		if namlen == 0 {
			continue
		}
		if name := unsafe.String(&b[start], namlen); name != "." && name != ".." {
			fn(start, name, typ)
		}
	}
	if len(b) < len(r.buf) {
		r.eof = true // the host filled less than the buffer: the end
	} else if complete == 0 {
		r.buf = make([]byte, 2*len(r.buf)) // one entry longer than the buffer
	}
}

// wantedEnt is an entry of a batch that next makes: where its name is in
// the buffer, and its type.
type wantedEnt struct {
	at, len int
	typ     fs.FileMode
}

// getDirBuf is a buffer for fd_readdir, from the pool if it has one.
func (f *FS) getDirBuf() []byte {
	if b, ok := f.dirBufs.Get().(*[readDirBuf]byte); ok {
		return b[:]
	}
	return make([]byte, readDirBuf)
}

// closeDir gives back the buffer of d's listing (readDirN), if it has one.
func (f *FS) closeDir(d *file) {
	if d.dir != nil {
		f.putDirBuf(d.dir.buf)
		d.dir.buf = nil
	}
}

// putDirBuf gives a listing's buffer back, unless it grew (one entry
// longer than the buffer) or there is none.
func (f *FS) putDirBuf(b []byte) {
	if len(b) == readDirBuf {
		f.dirBufs.Put((*[readDirBuf]byte)(b))
	}
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// typeUnknown marks an entry whose type the host did not give.
const typeUnknown = fs.ModeIrregular | fs.ModeTemporary

// fileType maps a WASI filetype to fs.FileMode's type bits.
func fileType(t byte) fs.FileMode {
	switch t {
	case 3: // directory
		return fs.ModeDir
	case 4: // regular_file
		return 0
	case 7: // symbolic_link
		return fs.ModeSymlink
	case 1: // block_device
		return fs.ModeDevice
	case 2: // character_device
		return fs.ModeDevice | fs.ModeCharDevice
	case 5, 6: // socket_dgram, socket_stream
		return fs.ModeSocket
	}
	return typeUnknown
}

//go:wasmimport moat read_files
//go:noescape
func hostReadFiles(dir *byte, dirLen uint32, names *byte, namesLen uint32, buf *byte, bufLen uint32, sizes *int32, count uint32) uint32

// readFiles is ReadFiles in one host call (moat.read_files): the host
// opens each name as path_open would and reads it whole into buf. The
// folder goes as its path from the preopen, the names after it each ended
// by a NUL, all raw bytes (a host function takes any, unlike wazero's
// path calls).
func (f *FS) readFiles(dir string, names []string, buf []byte, sizes []int32) int {
	names = names[:min(len(names), len(sizes))]
	if len(names) == 0 || len(buf) == 0 {
		return 0
	}
	p := full(f.root, dir)
	size := len(p)
	for _, nm := range names {
		size += len(nm) + 1
	}
	packed := make([]byte, 0, size)
	packed = append(packed, p...)
	for _, nm := range names {
		packed = append(packed, nm...)
		packed = append(packed, 0)
	}
	return int(hostReadFiles(&packed[0], uint32(len(p)), &packed[len(p)], uint32(len(packed)-len(p)),
		&buf[0], uint32(len(buf)), &sizes[0], uint32(len(names))))
}

//go:wasmimport moat walk_stop
//go:noescape
func hostWalkStop(at *byte, atLen uint32, shard uint32, hits, bytes uint64, buf *byte, bufLen uint32) uint32

// walkStop is WalkStop in one host call (moat.walk_stop), which takes the
// progress and answers the stop's length, writing it into buf when it
// fits.
func (f *FS) walkStop(p proto.Progress) string {
	var small [256]byte
	at := unsafe.StringData(p.At) // nil for "": the walk ended
	n := hostWalkStop(at, uint32(len(p.At)), uint32(p.Shard), uint64(p.Hits), uint64(p.Bytes), &small[0], uint32(len(small)))
	if n <= uint32(len(small)) {
		return string(small[:n])
	}
	big := make([]byte, n)
	if hostWalkStop(at, uint32(len(p.At)), uint32(p.Shard), uint64(p.Hits), uint64(p.Bytes), &big[0], n) != n {
		return "" // cannot happen: a stop, once posted, stays
	}
	return string(big)
}

//go:wasmimport moat claim_unit
//go:noescape
func hostClaimUnit(unit *byte, unitLen uint32) uint32

// claimUnit is ClaimUnit in one host call (moat.claim_unit): 1 is this
// shard's unit, 2 another's, 0 no deal.
func (f *FS) claimUnit(unit string) (mine, ok bool) {
	if unit == "" {
		return false, false
	}
	switch hostClaimUnit(unsafe.StringData(unit), uint32(len(unit))) {
	case 1:
		return true, true
	case 2:
		return false, true
	}
	return false, false
}

//go:wasmimport moat stat
//go:noescape
func hostStat(path *byte, pathLen uint32, out *byte) uint32

// attrs is Attrs in one host call (moat.stat): the path goes as its path
// from the preopen, raw bytes, as readFiles sends its folder.
func (f *FS) attrs(name string) (proto.Attrs, error) {
	p := full(f.root, name)
	var out [proto.AttrsSize]byte
	if hostStat(unsafe.StringData(p), uint32(len(p)), &out[0]) != 0 {
		return proto.Attrs{}, errNotDescribed
	}
	return proto.ReadAttrs(out[:]), nil
}
