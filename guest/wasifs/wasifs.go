//go:build unix || wasip1

// Package wasifs is the guest's filesystem: os.DirFS over the one preopen,
// except that files are opened, read and closed with direct WASI calls.
//
// Under wasip1, os.Open makes two host calls besides path_open, to put the
// descriptor in non-blocking mode (which a file on a WASI preopen never
// needs, and which costs the host system calls of its own), and sets up a
// poller entry and a finalizer. Per file opened and read, that is 2.5x the
// cost of the direct calls (BenchmarkOpenRead in wazero, make bench-guest),
// and about a fifth of a grep's time over Go's source tree. Everything else
// (Stat, Lstat, ReadLink, ReadDir) is os.DirFS's own.
//
// The package builds for unix too, so its tests run natively as well as in
// the guest.
package wasifs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/moatdev/moat/guest/proto"
)

// FS is a read-only fs.FS rooted at a directory. It implements fs.StatFS,
// fs.ReadDirFS and fs.ReadLinkFS as os.DirFS does, except that a name
// need not be UTF-8 (proto.ValidPath): a file name on Unix is bytes, and
// every name a listing shows must open.
type FS struct {
	root   string // with a trailing slash
	rootFD int    // the root folder, open, where openat can use it; else -1
	// dirBufs holds fd_readdir's buffers (*[readDirBuf]byte) between
	// listings: a walk lists thousands of folders, and a buffer made for
	// each was most of what a grep of 2,000 folders allocated in the
	// guest (and zeroed, and collected).
	dirBufs sync.Pool
}

// New returns the filesystem rooted at dir (in the guest, "/").
func New(dir string) *FS {
	root := dir
	if root == "" || root[len(root)-1] != '/' {
		root += "/"
	}
	return &FS{root: root, rootFD: openRoot(root)}
}

// Open opens name for reading. The file's Read and Close are direct WASI
// calls; Stat and ReadDir go through an os.File made on first use.
func (f *FS) Open(name string) (fs.File, error) {
	if !proto.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := f.open(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{fd: fd, name: name, root: f.root, fsys: f}, nil
}

// full is name from the preopen. It is built only when needed: most files
// are read and closed, and a string per file showed in a grep's
// allocations.
func full(root, name string) string {
	if name == "." {
		return root
	}
	return root + name
}

// path is name from the preopen, for the os calls, as os.DirFS makes it.
func (f *FS) path(op, name string) (string, error) {
	if !proto.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return full(f.root, wasiName(name)), nil
}

// Stat is os.Stat from the preopen.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	p, err := f.path("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	return fi, relative(err, name)
}

// ReadDir is os.DirFS's, sorted by name as fs.ReadDir sorts, but on a
// folder opened by Open (a direct WASI open, not os.Open's three host
// calls), listed in the guest with fd_readdir directly (readDir), and
// sorted with each name read once: os.ReadDir's sort calls Name twice a
// comparison, which in a folder of 100,000 entries was a large part of a
// walk's time under wasm.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) { return f.ReadDirSkip(name, nil) }

// ReadDirSkip is ReadDir without the files (never folders) skipFile (may
// be nil) rules out, left out before an entry is made for them, as ReadDirAnyOrder
// leaves them out. A sharded grep's shard leaves out the files dealt to
// the others: in a folder of 100,000 files, half the entries to make,
// hold and sort.
func (f *FS) ReadDirSkip(name string, skipFile func(name string) bool) ([]fs.DirEntry, error) {
	d, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return f.readDir(d.(*file), name, skipFile)
}

// ReadDirAnyOrder is ReadDir in the folder's own order, never sorted: for
// a walk that sorts only what it keeps (glob), sorting every folder's
// entries was a tenth of its time under wasm. Files (never folders)
// skipFile rules out, if it is set, are left out before an entry is made
// for them; it is handed the name in the listing's buffer and must not
// keep it. In a tree where a glob wants one file in a hundred, making the
// entries of the others was a quarter of the guest's time.
func (f *FS) ReadDirAnyOrder(name string, skipFile func(name string) bool) ([]fs.DirEntry, error) {
	d, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	list, err := f.readDirAll(d.(*file), skipFile)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err} // the path asked for, as ReadDir names it
	}
	return list, err
}

// ScanDir calls fn with the name and type of every entry of folder name,
// in the folder's own order, without "." and "..". Under wasip1 it hands
// fn each name where fd_readdir left it, making no entry and no string:
// fn must not keep name. A listing that keeps a few of a folder's
// entries (list_dir's page of a folder of 100,000) pays for those only.
func (f *FS) ScanDir(name string, fn func(name string, typ fs.FileMode)) error {
	d, err := f.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	return f.scanDir(d.(*file), name, fn)
}

// Lstat is os.Lstat from the preopen.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	p, err := f.path("lstat", name)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(p)
	return fi, relative(err, name)
}

// ReadLink is os.Readlink from the preopen.
func (f *FS) ReadLink(name string) (string, error) {
	p, err := f.path("readlink", name)
	if err != nil {
		return "", err
	}
	t, err := os.Readlink(p)
	return t, relative(err, name)
}

// relative names name, not the path from the preopen, in err, as
// os.DirFS does.
func relative(err error, name string) error {
	if pe, ok := err.(*fs.PathError); ok {
		pe.Path = name
	}
	return err
}

// file is an open descriptor. It is an fs.ReadDirFile; ReadDir fails on
// anything but a folder, as os.File's does.
type file struct {
	fd     int
	name   string   // as opened, for errors
	root   string   // the FS's root: full(root, name) names the os.File, whose ReadDir entries stat by it
	os     *os.File // made by Stat (or natively ReadDir); owns fd from then on
	closed bool
	fsys   *FS
	dir    *dirReader // the listing's state, under wasip1
}

func (f *file) Read(b []byte) (int, error) {
	if f.closed {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrClosed}
	}
	if len(b) == 0 {
		return 0, nil
	}
	n, err := syscall.Read(f.fd, b)
	switch {
	case err != nil:
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (f *file) Close() error {
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	f.closed = true
	f.fsys.closeDir(f)
	if f.os != nil {
		return f.os.Close()
	}
	if err := syscall.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// osFile wraps the descriptor in an os.File for the calls that need one.
func (f *file) osFile() (*os.File, error) {
	if f.closed {
		return nil, fs.ErrClosed
	}
	if f.os == nil {
		f.os = os.NewFile(uintptr(f.fd), full(f.root, wasiName(f.name)))
	}
	return f.os, nil
}

func (f *file) Stat() (fs.FileInfo, error) {
	o, err := f.osFile()
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: f.name, Err: err}
	}
	return o.Stat()
}

func (f *file) ReadDir(n int) ([]fs.DirEntry, error) {
	if f.closed {
		return nil, &fs.PathError{Op: "readdirent", Path: f.name, Err: fs.ErrClosed}
	}
	return f.fsys.readDirN(f, n)
}

// dirent is an entry of readDir's listing: small, for a listing of a
// wide folder is held whole while the walk goes through it.
type dirent struct {
	head *dirHead
	name string
	typ  fs.FileMode
}

// dirHead is what the entries of one listing share.
type dirHead struct {
	fsys *FS
	dir  string
}

func (e *dirent) Name() string               { return e.name }
func (e *dirent) IsDir() bool                { return e.typ.IsDir() }
func (e *dirent) Type() fs.FileMode          { return e.typ }
func (e *dirent) Info() (fs.FileInfo, error) { return e.head.fsys.Lstat(joinName(e.head.dir, e.name)) }
func (e *dirent) String() string             { return fs.FormatDirEntry(e) }

// joinName is the path of name in folder dir (both as fs.FS names).
func joinName(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// WalkStop tells the host how far the walk of a shard of a split grep
// has come (p) and answers where it may stop (proto.WalkStop), "" for
// none yet; where the guest runs it is one host call (moat.walk_stop),
// and natively there is never one.
func (f *FS) WalkStop(p proto.Progress) string { return f.walkStop(p) }

// ClaimUnit asks the host whether folder unit p of a split grep's walk is
// this shard's (proto.WalkStop.Claim): the first shard to reach a unit
// walks it. ok is false when the host deals none (natively, always).
func (f *FS) ClaimUnit(p string) (mine, ok bool) { return f.claimUnit(p) }

// errNotDescribed is Attrs' error: the host did not describe the path
// (it does not exist, is denied or leads out of the root), which the
// guest's own Lstat of it says precisely.
var errNotDescribed = errors.New("the host did not describe the path")

// Attrs is what WASI's filestat does not carry of name, described
// without following a final symlink: its permission bits and the times
// the host keeps, in one host call where the guest runs (moat.stat),
// resolved by the host as its Lstat of name is.
func (f *FS) Attrs(name string) (proto.Attrs, error) {
	if !proto.ValidPath(name) {
		return proto.Attrs{}, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	a, err := f.attrs(name)
	if err != nil {
		return proto.Attrs{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return a, nil
}

// ReadFiles reads whole, back to back into buf, the regular files names
// (each one path component) of folder dir, in one host call where the
// guest runs: a grep of many small files spent more on the three or four
// WASI calls a file than on reading it. sizes[i] (len(sizes) >=
// len(names)) is how many bytes names[i] took, or -1 when it must be
// opened the usual way (which then says why: an error, not a regular file,
// too large for buf, changing as it was read). It returns how many names
// were decided, in order; the rest did not fit in what was left of buf.
func (f *FS) ReadFiles(dir string, names []string, buf []byte, sizes []int32) int {
	return f.readFiles(dir, names, buf, sizes)
}
