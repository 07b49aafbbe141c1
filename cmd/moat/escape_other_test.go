//go:build !unix

package main

import "errors"

func mknodChar(name, major, minor string) error { return errors.ErrUnsupported }

func mkfifo(name string) error { return errors.ErrUnsupported }
