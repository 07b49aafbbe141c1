package assembly

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The fallback cache is under the shared temporary folder and holds native
// code moat runs: a folder another user could have made or can write, or
// a symbolic link to one, is refused.
func TestPrivateCacheRefusesSharedFolders(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file modes or owners to check")
	}
	tmp := t.TempDir()
	open := filepath.Join(tmp, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777) // past the umask
	target := filepath.Join(tmp, "target")
	os.Mkdir(target, 0o700)
	link := filepath.Join(tmp, "link")
	os.Symlink(target, link)
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o600)
	for _, dir := range []string{open, link, file} {
		if err := privateCache(dir); err == nil {
			t.Errorf("%s: accepted", dir)
		}
	}
	fresh := filepath.Join(tmp, "fresh")
	if err := privateCache(fresh); err != nil {
		t.Fatalf("a new folder: %v", err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("a new folder: %v, %v", fi.Mode(), err)
	}
	if err := privateCache(fresh); err != nil {
		t.Errorf("the same folder again: %v", err)
	}
}
