package guest

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReleaseWasm lets the kernel drop the resident pages of the module's
// bytes once the guest is compiled. They are the executable's own data,
// never written, so a page dropped is read again from the executable on
// disk if it is ever used again; until then they are 4.8 MB less of the
// process's resident memory. Only whole pages inside the bytes are
// released, never a neighbour's.
func ReleaseWasm() {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(wasm)))
	end := start + uintptr(len(wasm))
	first, last := (start+page-1)&^(page-1), end&^(page-1)
	if last <= first {
		return
	}
	b := wasm[first-start : last-start]
	unix.Madvise(b, unix.MADV_DONTNEED) // advice: nothing to do if refused
}
