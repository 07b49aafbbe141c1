//go:build !unix

package confine

// Windows has no FIFOs to block on; os.Root refuses to follow a final
// symlink out of the root on its own.
const (
	oNonblock = 0
	oNofollow = 0
)
