//go:build !unix

package runner

import "github.com/tetratelabs/wazero/experimental"

// linearMemory is wazero's default (a Go slice) where there is no mmap.
func linearMemory() experimental.MemoryAllocator { return nil }
