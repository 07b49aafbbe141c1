//go:build unix

package runner

import (
	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

// linearMemory backs each guest's linear memory with its own mapping of
// the largest size it may grow to, reserved but not committed: pages cost
// memory only once the guest touches them, and growing never copies. With
// wazero's default (a Go slice that is reallocated and copied as the guest
// grows, then held in the Go heap), a fresh grep spent a tenth of its time
// copying memory and faulting in pages, and each instance's memory counted
// towards the host's garbage collection pacing.
func linearMemory() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		buf, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
		if err != nil {
			return &copied{} // no address space for it: wazero's way
		}
		return &mapped{buf: buf}
	})
}

type mapped struct{ buf []byte }

// Reallocate returns the first size bytes of the mapping; it never moves.
func (m *mapped) Reallocate(size uint64) []byte {
	if m.buf == nil || size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size]
}

// Free unmaps the memory. wazero calls it once the instance is closed.
func (m *mapped) Free() {
	if m.buf != nil {
		unix.Munmap(m.buf)
		m.buf = nil
	}
}

// copied is a linear memory in the Go heap, grown by copying, for when a
// mapping cannot be made.
type copied struct{ buf []byte }

func (c *copied) Reallocate(size uint64) []byte {
	if size > uint64(cap(c.buf)) {
		b := make([]byte, size, max(size, 2*uint64(cap(c.buf))))
		copy(b, c.buf)
		c.buf = b
	}
	c.buf = c.buf[:size]
	return c.buf
}

func (c *copied) Free() { c.buf = nil }
