// Package confine is the filesystem the WASI guest sees: a read-only view of
// the sandbox root that resolves every path beneath the root, never follows
// a symlink out of it, and enforces the deny-list on every component it
// resolves, including the targets of symlinks.
//
// # Why not wazero's dir mounts
//
// wazero's WithDirMount and WithReadOnlyDirMount follow symlinks out of the
// mounted folder (measured here: a guest read /link.txt, a symlink to a file
// outside the root, and got it; wazero#2321 calls full sandboxing out of
// scope). moat never uses them. This package implements wazero's
// experimental sys.FS instead.
//
// # How a path is resolved
//
// The walker (resolve) takes the guest's path one component at a time from
// the root. Each component is checked against the deny-list, then examined
// with lstat through a resolver; a symlink's target is read and spliced into
// the remaining path (at most [maxSymlinks] times), an absolute target or a
// ".." above the root is refused as an escape. The result is a canonical
// path with no symlinks in it, which the resolver then opens:
//
//   - openat2 (Linux 5.6+): RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
//     RESOLVE_NO_MAGICLINKS, so the kernel itself refuses anything that is
//     not exactly the canonical path beneath the root.
//   - os.Root (every platform): Go's root-confined file access, which stops
//     "..", absolute and out-of-root symlink resolution on its own.
//
// After opening, the file's identity is compared with what the walker saw,
// so a path swapped between check and open (a rename or a re-pointed
// symlink) is refused rather than read. A batch of small files in one
// folder is read in one call (MountControl.ReadFiles): the folder through
// the walk, each file one component beneath it.
//
// # The redacted view
//
// With a redactor (FS.SetRedactor; host/runner sets one unless
// --redact=false) every regular file is served as its redacted view:
// each secret host/redact finds in the whole file replaced by its mark,
// whatever window of it is read, by path_open or the batch read (view.go
// says how).
//
// # Isolation
//
// What this layer does not protect against: hard links inside the root to
// files elsewhere (they are ordinary files by every path-based check), bind
// mounts inside the root, and a concurrent local writer racing the os.Root
// resolver on an intermediate folder (the identity check catches the final
// file; openat2 closes the race entirely). Files are opened read-only and
// non-blocking: FIFOs, sockets and devices are refused, never opened.
package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
)

// maxSymlinks bounds symlink hops in one resolution, as os.Root does
// (rootMaxSymlinks = 8 // __POSIX_SYMLOOP_MAX).
const maxSymlinks = 8

// Errors, as the guest receives them: each wraps the errno that guest/proto
// assigns it ("Errors of the filesystem" there is the contract).
var (
	ErrEscape  = fmt.Errorf("confine: path escapes the sandbox: %w", proto.ErrnoEscape)
	ErrDenied  = fmt.Errorf("confine: denied by policy: %w", proto.ErrnoDenied)
	ErrSpecial = fmt.Errorf("confine: not a regular file or folder: %w", proto.ErrnoSpecial)
	ErrChanged = fmt.Errorf("confine: path changed while it was opened: %w", proto.ErrnoChanged)
	ErrLoop    = fmt.Errorf("confine: too many symlinks: %w", proto.ErrnoLoop)
	errNotDir  = fmt.Errorf("confine: not a folder: %w", syscall.ENOTDIR)
)

// resolver opens canonical (symlink-free, cleaned, root-relative) paths.
type resolver interface {
	// open opens a regular file or folder read-only without blocking and
	// without following a final symlink, and describes what it opened
	// (fstat of the open file, for the identity check).
	open(rel string) (handle, fs.FileInfo, error)
	lstat(rel string) (fs.FileInfo, error)
	readlink(rel string) (string, error)
	close() error
}

// FS is the confined, read-only view of one root.
type FS struct {
	r    resolver
	pol  *policy.Policy
	kind Kind // the resolver actually in use
	// walk is false only for Unconfined: paths go to the OS as given.
	walk bool
	// red, when set, makes every regular file its redacted view
	// (view.go); seen is what was found in each file.
	red  *redact.Redactor
	seen *findings
	bufs *viewBufs // the buffers of views held in memory
	// subs, with several roots (roots.go), are their FSes, named by
	// labels; r is then nil, and every name is picked out to its root.
	subs   []*FS
	labels []string
}

// New opens root with the requested resolver. Auto and Openat2 use openat2
// where the kernel provides it and fall back to os.Root on ENOSYS or EPERM
// (old kernels, seccomp filters); [FS.Kind] tells which one is in use.
func New(root string, kind Kind, pol *policy.Policy) (*FS, error) {
	if pol == nil {
		return nil, errors.New("confine: nil policy")
	}
	switch kind {
	case Unconfined:
		return &FS{r: unconfined(root), pol: pol, kind: Unconfined}, nil
	case Auto, Openat2:
		r, err := newOpenat2(root)
		if err == nil {
			return &FS{r: r, pol: pol, kind: Openat2, walk: true}, nil
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return nil, err
		}
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("confine: open root: %w", err)
	}
	return &FS{r: osRoot{rt}, pol: pol, kind: Root, walk: true}, nil
}

// Kind is the resolver in use.
func (f *FS) Kind() Kind { return f.kind }

// Close releases the root.
func (f *FS) Close() error {
	if f.r != nil {
		return f.r.close()
	}
	var first error
	for _, s := range f.subs {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// resolve walks name from the root and returns its canonical path, with the
// lstat of the final component (nil if it does not exist). followFinal says
// whether a final symlink is followed.
func (f *FS) resolve(name string, followFinal bool) (string, fs.FileInfo, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return "", nil, syscall.EINVAL
	}
	if !f.walk {
		fi, err := f.r.lstat(name)
		if err == nil && followFinal && fi.Mode()&fs.ModeSymlink != 0 {
			fi, err = os.Stat(f.r.(unconfined).join(name))
		}
		return name, fi, err
	}
	if rel, fi, ok, err := f.fastResolve(name, followFinal); ok {
		return rel, fi, err
	}
	todo := splitPath(name)
	var done []string // canonical components so far
	hops := 0
	var fi fs.FileInfo
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", nil, ErrEscape
			}
			done = done[:len(done)-1]
			fi = nil
			continue
		}
		parent := path.Join(done...)
		if _, denied := f.pol.DeniedChild(parent, c); denied {
			return "", nil, ErrDenied
		}
		cur := path.Join(parent, c)
		var err error
		fi, err = f.r.lstat(cur)
		if err != nil {
			return "", nil, err
		}
		last := len(todo) == 0 || allDots(todo)
		if fi.Mode()&fs.ModeSymlink != 0 && (!last || followFinal) {
			if hops++; hops > maxSymlinks {
				return "", nil, ErrLoop
			}
			target, err := f.r.readlink(cur)
			if err != nil {
				return "", nil, err
			}
			if target == "" || strings.HasPrefix(target, "/") || strings.HasPrefix(target, `\`) || hasVolume(target) {
				return "", nil, ErrEscape
			}
			todo = append(splitPath(target), todo...)
			continue
		}
		if !last && !fi.IsDir() {
			return "", nil, errNotDir
		}
		done = append(done, c)
	}
	rel := "."
	if len(done) > 0 {
		rel = path.Join(done...)
	}
	if fi == nil { // the walk ended on ".." or named the root
		var err error
		if fi, err = f.r.lstat(rel); err != nil {
			return "", nil, err
		}
	}
	return rel, fi, nil
}

// fastResolve answers in one kernel call the common case of a path with no
// symlink and no "..": the resolver confirms there is no symlink on the way
// (openat2 RESOLVE_NO_SYMLINKS), so the lexical components are the real
// ones and the deny-list check on them is exact. "Does not exist" and "not
// a folder" are final answers too: the kernel meets a symlink on the way
// before it can find a component missing, so without ELOOP the walker would
// find the same. Anything else (a symlink anywhere, "..", another error)
// goes to the walker.
func (f *FS) fastResolve(name string, followFinal bool) (rel string, fi fs.FileInfo, done bool, err error) {
	fast, ok := f.r.(interface {
		lstatNoSymlinks(rel string) (fs.FileInfo, error)
	})
	if !ok || strings.Contains(name, "..") || strings.Contains(name, `\`) {
		return "", nil, false, nil
	}
	rel = path.Clean(strings.TrimLeft(name, "/"))
	if _, denied := f.pol.Denied(rel); denied {
		return "", nil, false, nil // the walker reports it
	}
	fi, err = fast.lstatNoSymlinks(rel)
	switch {
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return "", nil, true, err
	case err != nil || (followFinal && fi.Mode()&fs.ModeSymlink != 0):
		return "", nil, false, nil
	}
	return rel, fi, true, nil
}

// splitPath splits a path into the components the system will resolve:
// on Unix a backslash is part of a name, on Windows a separator.
func splitPath(p string) []string {
	if backslashSeparates {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	return strings.Split(p, "/")
}

func allDots(s []string) bool {
	for _, c := range s {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

func hasVolume(p string) bool { return len(p) >= 2 && p[1] == ':' }

// open resolves and opens name, refusing special files and paths that
// changed between the walk and the open.
func (f *FS) open(name string) (handle, string, error) {
	rel, fi, err := f.resolve(name, true)
	if err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, "", ErrSpecial
	}
	file, got, err := f.r.open(rel)
	if err != nil {
		return nil, "", err
	}
	if !sameFile(fi, got) || (!got.Mode().IsRegular() && !got.IsDir()) {
		file.Close()
		return nil, "", ErrChanged
	}
	if f.red != nil && got.Mode().IsRegular() {
		if file, err = f.view(file, rel, got); err != nil {
			return nil, "", err
		}
	}
	return file, rel, nil
}

// handle is an open file or folder: an *os.File, or for the openat2
// resolver's regular files a bare descriptor (rawFile), which spares each
// open the runtime poller's bookkeeping (an fcntl, a failed epoll_ctl and a
// finalizer) that a file read once from start to end never needs.
type handle interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
	Stat() (fs.FileInfo, error)
	ReadDir(n int) ([]fs.DirEntry, error)
}

// fileID is a FileInfo that knows its file's identity (device and inode).
type fileID interface{ id() [2]uint64 }

// sameFile is os.SameFile for FileInfos that os did not make (statInfo)
// too: the same device and inode.
func sameFile(a, b fs.FileInfo) bool {
	x, ok1 := a.(fileID)
	y, ok2 := b.(fileID)
	if ok1 && ok2 {
		return x.id() == y.id()
	}
	if ok1 || ok2 {
		return false // one of each: a resolver mixing them is a bug, refuse
	}
	return os.SameFile(a, b)
}

// Open implements fs.FS over the confined view, for host-side use and tests.
// Folder listings leave out denied entries.
func (f *FS) Open(name string) (fs.File, error) {
	sub, rest, err := f.pick(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if sub == nil {
		return &file_{f: &topDir{labels: f.labels}, rel: ".", top: true}, nil
	}
	file, rel, err := sub.open(rest)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file_{f: file, rel: rel, pol: sub.pol}, nil
}

// Lstat describes name without following a final symlink.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	fi, err := f.describe(name, false)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return fi, nil
}

// Stat describes name, following symlinks inside the root. It never opens
// the file, so it is safe on FIFOs.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.describe(name, true)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return fi, nil
}

// describe is the walk's description of name in its root, or of the top.
func (f *FS) describe(name string, followFinal bool) (fs.FileInfo, error) {
	sub, rest, err := f.pick(name)
	switch {
	case err != nil:
		return nil, err
	case sub == nil:
		return topInfo{}, nil
	}
	_, fi, err := sub.resolve(rest, followFinal)
	return fi, err
}

// ReadLink returns a symlink's target only if it resolves inside the root
// and is not denied; otherwise the escape or denial error.
func (f *FS) ReadLink(name string) (string, error) {
	sub, rest, err := f.pick(name)
	if err == nil && sub == nil {
		err = syscall.EINVAL // the top is a folder
	}
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	f = sub
	rel, fi, err := f.resolve(rest, false)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.EINVAL}
	}
	if _, _, err := f.resolve(rel, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	t, err := f.r.readlink(rel)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return t, nil
}

// file_ is an open file of the confined view. It deliberately does not
// embed *os.File: wazero's adapter prefers an os.File's Readdir and Fd when
// it can see them, which would bypass the deny-list filter below.
type file_ struct {
	f   handle
	rel string
	pol *policy.Policy
	// top: the top folder of several roots, whose entries are the
	// roots' labels, none of them judged by the deny-list.
	top bool
	// onList, when set, is called at the folder's first listing (a
	// mount's observer, observe.go).
	onList func()
}

func (d *file_) Stat() (fs.FileInfo, error)                { return d.f.Stat() }
func (d *file_) Read(p []byte) (int, error)                { return d.f.Read(p) }
func (d *file_) ReadAt(p []byte, off int64) (int, error)   { return d.f.ReadAt(p, off) }
func (d *file_) Seek(off int64, whence int) (int64, error) { return d.f.Seek(off, whence) }
func (d *file_) Close() error                              { return d.f.Close() }
func (d *file_) visible(name string) bool {
	if d.top {
		return true
	}
	_, denied := d.pol.DeniedChild(d.rel, name)
	return !denied
}

// ReadDir lists the folder without its denied entries.
func (d *file_) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.onList != nil {
		d.onList()
		d.onList = nil
	}
	return filterDir(n, d.f.ReadDir, func(e fs.DirEntry) string { return e.Name() }, d.visible)
}

// There is deliberately no Readdir ([]fs.FileInfo): wazero would prefer
// it, and os.File.Readdir lstats every entry just to report inodes the
// guest never uses.

// filterDir reads batches until it has something visible, so that a batch
// made only of denied names does not look like the end of the folder.
func filterDir[T any](n int, read func(int) ([]T, error), name func(T) string, visible func(string) bool) ([]T, error) {
	for {
		ents, err := read(n)
		out := ents[:0]
		for _, e := range ents {
			if visible(name(e)) {
				out = append(out, e)
			}
		}
		if len(out) > 0 || err != nil || n <= 0 {
			return out, err
		}
	}
}

// Mount returns the view as a wazero sys.FS for WithSysFSMount. File
// operations go through wazero's adapter of [FS.Open]; Stat, Lstat and
// Readlink are answered by the walker so that they never open a file.
//
// Each guest instance gets its own Mount, and c controls it (see
// [MountControl]).
func (f *FS) Mount() (m experimentalsys.FS, c *MountControl) {
	mt := &mount{f: f}
	mt.AdaptFS = &sysfs.AdaptFS{FS: errnoFS{f, mt}}
	return mt, &MountControl{mt: mt}
}

// MountControl is what the host does to one guest's mount between and
// during its calls.
type MountControl struct {
	mt *mount
}

// Revoke cuts the instance off: every later operation, including reads of
// files it already holds open, fails with EIO (proto.ErrnoRevoked). The
// runner uses it to stop a guest that overran its deadline without
// wazero's per-loop termination checks (see host/runner).
func (c *MountControl) Revoke() { c.mt.dead.Store(true) }

// errnoFS reduces errors to their syscall.Errno, the only form wazero's
// adapter maps to a WASI errno (anything else would reach the guest as EIO).
type errnoFS struct {
	f  *FS
	mt *mount // whose observer is told of what is opened
}

func (e errnoFS) Open(name string) (fs.File, error) {
	file, err := e.f.Open(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errnoOf(err)}
	}
	e.mt.noteOpen(name, file.(*file_))
	return file, nil
}

// errnoOf finds the errno in err; an error without one is refused as
// proto.ErrnoDenied (fail closed) rather than reported as an I/O error.
// The permission errnos carry the contract's meanings: EPERM and EACCES
// are this package's refusals (ErrEscape, ErrDenied), and the same
// numbers from the host's file system become proto.ErrnoOSDenied, so that
// a file's mode is never reported as the sandbox's policy, nor an EPERM
// as an escape.
func errnoOf(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if (errno == syscall.EACCES || errno == syscall.EPERM) && !errors.Is(err, ErrDenied) && !errors.Is(err, ErrEscape) {
			return proto.ErrnoOSDenied
		}
		return errno
	}
	if errors.Is(err, fs.ErrNotExist) {
		return syscall.ENOENT
	}
	return proto.ErrnoDenied
}

func toErrno(err error) experimentalsys.Errno {
	return experimentalsys.UnwrapOSError(errnoOf(err))
}

type mount struct {
	*sysfs.AdaptFS
	f    *FS
	dead atomic.Bool
	obs  atomic.Pointer[observerBox] // MountControl.Observe
}

func (m *mount) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if m.dead.Load() {
		return nil, experimentalsys.EIO
	}
	if flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0 {
		return nil, experimentalsys.EROFS
	}
	f, errno := m.AdaptFS.OpenFile(guestPath(p), flag, perm)
	if errno != 0 {
		return nil, errno
	}
	return &revocable{File: f, dead: &m.dead}, 0
}

// revocable fails every data operation once its mount is revoked.
type revocable struct {
	experimentalsys.File
	dead *atomic.Bool
}

func (r *revocable) Read(b []byte) (int, experimentalsys.Errno) {
	if r.dead.Load() {
		return 0, experimentalsys.EIO
	}
	return r.File.Read(b)
}

func (r *revocable) Pread(b []byte, off int64) (int, experimentalsys.Errno) {
	if r.dead.Load() {
		return 0, experimentalsys.EIO
	}
	return r.File.Pread(b, off)
}

func (r *revocable) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if r.dead.Load() {
		return nil, experimentalsys.EIO
	}
	return r.File.Readdir(n)
}

func (m *mount) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if m.dead.Load() {
		return sys.Stat_t{}, experimentalsys.EIO
	}
	fi, err := m.f.Stat(guestPath(p))
	if err != nil {
		return sys.Stat_t{}, toErrno(err)
	}
	m.note(guestPath(p), Described)
	return sys.NewStat_t(fi), 0
}

func (m *mount) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if m.dead.Load() {
		return sys.Stat_t{}, experimentalsys.EIO
	}
	fi, err := m.f.Lstat(guestPath(p))
	if err != nil {
		return sys.Stat_t{}, toErrno(err)
	}
	m.note(guestPath(p), Described)
	return sys.NewStat_t(fi), 0
}

func (m *mount) Readlink(p string) (string, experimentalsys.Errno) {
	if m.dead.Load() {
		return "", experimentalsys.EIO
	}
	t, err := m.f.ReadLink(guestPath(p))
	if err != nil {
		return "", toErrno(err)
	}
	return t, 0
}

// guestPath turns wazero's path (relative to the mount, possibly with a
// leading "/", its bytes that are not UTF-8 escaped by the guest as
// proto.WASIPath says) into the walker's form.
func guestPath(p string) string {
	p = strings.TrimLeft(proto.FromWASIPath(p), "/")
	if p == "" {
		return "."
	}
	return p
}
