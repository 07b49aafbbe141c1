package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: the file is replaced whole, 0600, with no temporary file
// left beside it; a folder that is not there is an error, and the file
// before stays.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	for _, sync := range []bool{false, true} {
		for _, data := range []string{"first", "second, longer"} {
			if err := Write(name, []byte(data), sync); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(name)
			if err != nil || string(b) != data {
				t.Fatalf("read %q, %v; want %q", b, err, data)
			}
		}
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the folder holds %d entries, want the file alone", len(entries))
	}
	if err := Write(filepath.Join(dir, "no", "f"), []byte("x"), false); err == nil {
		t.Fatal("written into a folder that is not there")
	}
}
