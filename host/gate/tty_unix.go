//go:build unix

package gate

import (
	"fmt"
	"os"
)

// openTTY opens the controlling terminal. It fails when the process has
// none (a service, a pipeline started without one, setsid): then there is
// no person to ask.
func openTTY() (TTY, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoTerminal, err)
	}
	return f, nil
}
