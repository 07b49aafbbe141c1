//go:build unix

package main

import (
	"strconv"
	"syscall"
)

// mknodChar creates a character device node (root only).
func mknodChar(name, major, minor string) error {
	ma, err := strconv.Atoi(major)
	if err != nil {
		return err
	}
	mi, err := strconv.Atoi(minor)
	if err != nil {
		return err
	}
	return syscall.Mknod(name, syscall.S_IFCHR|0o666, ma<<8|mi)
}

// mkfifo creates a named pipe.
func mkfifo(name string) error { return syscall.Mkfifo(name, 0o644) }
