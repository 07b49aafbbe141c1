package confine

import "fmt"

// Kind selects how paths are resolved beneath the root.
type Kind int

const (
	// Auto uses openat2 where the kernel has it, else os.Root.
	Auto Kind = iota
	// Openat2 uses Linux openat2 with [Openat2Flags], falling back to
	// os.Root on ENOSYS/EPERM.
	Openat2
	// Root uses Go's os.Root on every platform.
	Root
	// Unconfined resolves paths with plain os calls under the root, with no
	// protection against symlinks or "..". It exists only so tests can show
	// that the other layers stop an escape on their own; no flag selects it.
	Unconfined
)

// Openat2Flags names the resolve flags every openat2 call passes, as
// `moat doctor` and the documentation show them. openat2_linux.go's
// resolveFlags is the value; a test holds the two together.
const Openat2Flags = "RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS"

func (k Kind) String() string {
	switch k {
	case Auto:
		return "auto"
	case Openat2:
		return "openat2"
	case Root:
		return "root"
	case Unconfined:
		return "unconfined"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind parses the --resolver flag. "unconfined" is not accepted.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "auto", "":
		return Auto, nil
	case "openat2":
		return Openat2, nil
	case "root":
		return Root, nil
	}
	return 0, fmt.Errorf("unknown resolver %q (want auto, openat2 or root)", s)
}
