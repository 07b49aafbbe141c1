//go:build unix

package wasifs

import (
	"io/fs"
	"syscall"
)

// openRoot: natively Open goes through syscall.Open by path.
func openRoot(string) int { return -1 }

func (f *FS) open(name string) (int, error) {
	return syscall.Open(full(f.root, name), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
}

// readDir lists the open folder natively through os.File.ReadDir.
func (f *FS) readDir(d *file, name string) ([]fs.DirEntry, error) {
	return d.ReadDir(-1)
}
