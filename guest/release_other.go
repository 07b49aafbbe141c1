//go:build !linux

package guest

// ReleaseWasm does nothing here; see release_linux.go.
func ReleaseWasm() {}
