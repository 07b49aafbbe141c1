// Package atomicfile writes a file whole or not at all: to a private
// temporary file in the same folder, renamed over the name, so a reader
// sees the old file or the new one, never half of either.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces name with data, readable and writable by this user
// alone (0600). With sync the data reaches the disk before the rename,
// so a crash too leaves the old file or the new one whole.
func Write(name string, data []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".moat-tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600) // whatever the platform's default for temporary files
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
