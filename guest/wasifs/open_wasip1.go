//go:build wasip1

package wasifs

import (
	"io/fs"
	"syscall"
	"unsafe"
)

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

// readDir lists the open folder fd (name as opened) with fd_readdir
// directly. os.File.ReadDir allocates an entry and a name per entry and
// locks per entry; here the names of one batch share one string and the
// entries one slice, which under wasm halved a wide tree's walk. Entries
// of a type the host does not give are described by Lstat, as os does.
func (f *FS) readDir(d *file, name string) ([]fs.DirEntry, error) {
	fd := d.fd
	buf := make([]byte, readDirBuf)
	var out []fs.DirEntry
	var cookie uint64
	for {
		var n uint32
		if errno := fdReaddir(int32(fd), &buf[0], uint32(len(buf)), cookie, &n); errno != 0 {
			return out, &fs.PathError{Op: "readdirent", Path: name, Err: errno}
		}
		text := string(buf[:n]) // one allocation for the names of the batch
		var ents []dirent
		at, complete := 0, 0
		for at+direntSize <= len(text) {
			namlen := int(le32(text[at+16:]))
			if at+direntSize+namlen > len(text) {
				break // cut off at the buffer's end: read again from its cookie
			}
			next := le64(text[at:])
			typ := text[at+20]
			nm := text[at+direntSize : at+direntSize+namlen]
			at += direntSize + namlen
			complete++
			cookie = next
			if nm == "." || nm == ".." {
				continue
			}
			ents = append(ents, dirent{fsys: f, dir: name, name: nm, typ: fileType(typ)})
		}
		for i := range ents {
			e := &ents[i]
			if e.typ == typeUnknown {
				info, err := f.Lstat(joinName(name, e.name))
				if err != nil {
					continue // gone since it was listed, as os treats it
				}
				e.typ = info.Mode().Type()
			}
			out = append(out, e)
		}
		if int(n) < len(buf) {
			return out, nil // the host filled less than the buffer: the end
		}
		if complete == 0 {
			buf = make([]byte, 2*len(buf)) // one entry longer than the buffer
		}
	}
}

func le32(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func le64(s string) uint64 { return uint64(le32(s)) | uint64(le32(s[4:]))<<32 }

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
