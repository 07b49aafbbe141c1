//go:build !unix

package confinetest

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
