//go:build !linux

package confine

import (
	"errors"
	"fmt"
)

// openat2 is Linux-only; elsewhere New falls back to os.Root.
func newOpenat2(string) (resolver, error) {
	return nil, fmt.Errorf("confine: openat2: %w (not Linux)", errors.ErrUnsupported)
}
