//go:build unix

package wasifs

import "syscall"

// openRoot: natively Open goes through syscall.Open by path.
func openRoot(string) int { return -1 }

// wasiName is name itself: natively a path is bytes.
func wasiName(name string) string { return name }

func (f *FS) open(name string) (int, error) {
	return syscall.Open(full(f.root, name), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
}
