//go:build !unix

package confine

// Windows has no FIFOs to block on; os.Root refuses to follow a final
// symlink out of the root on its own.
const (
	oNonblock = 0
	oNofollow = 0
)

// backslashSeparates is true: Windows reads a backslash as a separator,
// so the walker splits on it too, and checks each piece.
const backslashSeparates = true
