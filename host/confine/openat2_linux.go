package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// openat2Resolver resolves with Linux openat2: the kernel refuses any path
// that leaves the root, goes through a symlink or a magic link (/proc/self/..).
// The walker has already resolved symlinks, so RESOLVE_NO_SYMLINKS holds.
type openat2Resolver struct {
	dir  *os.File
	bufs *sync.Pool // the folders' listing buffers (newDirBufs)
}

const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

func newOpenat2(root string) (resolver, error) {
	dir, err := os.Open(root)
	if err != nil {
		return nil, fmt.Errorf("confine: open root: %w", err)
	}
	r := openat2Resolver{dir, newDirBufs()}
	// Probe: ENOSYS on kernels before 5.6, EPERM under seccomp filters
	// (some container runtimes) mean openat2 is unavailable here.
	fd, err := r.openat2(".", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		dir.Close()
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("confine: openat2: %w (%w)", errors.ErrUnsupported, err)
		}
		return nil, fmt.Errorf("confine: openat2 probe: %w", err)
	}
	unix.Close(fd)
	return r, nil
}

func (r openat2Resolver) openat2(rel string, flags int) (int, error) {
	for {
		fd, err := unix.Openat2(int(r.dir.Fd()), rel, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
			Resolve: resolveFlags,
		})
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "openat2", Path: rel, Err: err}
		}
		return fd, nil
	}
}

// open opens rel; a regular file is kept on its bare descriptor (rawFile),
// a folder too (rawDir), anything else (whatever the caller is about to
// refuse) goes in an *os.File.
func (r openat2Resolver) open(rel string) (handle, fs.FileInfo, error) {
	fd, err := r.openat2(rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, nil, err
	}
	fi, err := fstat(fd, rel)
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	switch {
	case fi.Mode().IsRegular():
		return &rawFile{fd: fd, rel: rel, size: fi.Size(), info: fi}, fi, nil
	case fi.IsDir():
		return &rawDir{rawFile: rawFile{fd: fd, rel: rel}, bufs: r.bufs}, fi, nil
	}
	return os.NewFile(uintptr(fd), rel), fi, nil
}

// lstat describes rel through an O_PATH descriptor, which opens nothing
// (a FIFO or device is not opened by it).
func (r openat2Resolver) lstat(rel string) (fs.FileInfo, error) {
	fd, err := r.openat2(rel, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return fstat(fd, rel)
}

// lstatNoSymlinks is lstat that fails (ELOOP) if any component but the
// last is a symlink; see FS.fastResolve.
func (r openat2Resolver) lstatNoSymlinks(rel string) (fs.FileInfo, error) {
	return r.lstat(rel) // resolveFlags already forbid symlinks on the way
}

func (r openat2Resolver) readlink(rel string) (string, error) {
	fd, err := r.openat2(rel, unix.O_PATH)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: rel, Err: err}
	}
	return string(buf[:n]), nil
}

func (r openat2Resolver) close() error { return r.dir.Close() }
