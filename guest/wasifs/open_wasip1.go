//go:build wasip1

package wasifs

import (
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
