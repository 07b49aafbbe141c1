package confine

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenat2FlagsText holds the flags doctor prints to the flags passed.
func TestOpenat2FlagsText(t *testing.T) {
	names := map[string]uint64{
		"RESOLVE_BENEATH":       unix.RESOLVE_BENEATH,
		"RESOLVE_NO_SYMLINKS":   unix.RESOLVE_NO_SYMLINKS,
		"RESOLVE_NO_MAGICLINKS": unix.RESOLVE_NO_MAGICLINKS,
		"RESOLVE_NO_XDEV":       unix.RESOLVE_NO_XDEV,
		"RESOLVE_IN_ROOT":       unix.RESOLVE_IN_ROOT,
	}
	var got uint64
	for _, n := range strings.Split(Openat2Flags, "|") {
		v, ok := names[n]
		if !ok {
			t.Fatalf("Openat2Flags names %q, not a resolve flag", n)
		}
		got |= v
	}
	if got != resolveFlags {
		t.Errorf("Openat2Flags = %s (%#x), but openat2 is called with %#x", Openat2Flags, got, uint64(resolveFlags))
	}
}
