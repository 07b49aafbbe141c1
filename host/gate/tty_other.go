//go:build !unix

package gate

import "fmt"

// openTTY is not implemented on this system: moat does not know how to
// reach the person at the console without going through stdin, so write
// proposals are refused (fail closed).
func openTTY() (TTY, error) {
	return nil, fmt.Errorf("%w: the approval prompt needs a Unix terminal", ErrNoTerminal)
}
