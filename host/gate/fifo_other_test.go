//go:build !unix

package gate

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
