//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package gate

import "errors"

// tcflushIn is not implemented here; the gate has no terminal on these
// systems anyway (openTTY fails closed on every system but Unix).
func tcflushIn(int) error { return errors.New("gate: no tcflush on this system") }
