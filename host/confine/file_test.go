//go:build unix

package confine_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenFile checks what every resolver hands out for a regular file (a
// bare descriptor under openat2): its description, reads to the end,
// ReadAt's full reads, Seek, and a second Close that fails rather than
// closing a descriptor reused since.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	data := []byte("hello, confined world\n")
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), data, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(filepath.Join(dir, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			f := newFS(t, dir, k)
			file, err := f.Open("f.txt")
			if err != nil {
				t.Fatal(err)
			}
			fi, err := file.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if fi.Name() != "f.txt" || fi.Size() != int64(len(data)) || fi.Mode() != want.Mode() || !fi.ModTime().Equal(want.ModTime()) || fi.IsDir() {
				t.Errorf("Stat: %s %d %v %v dir=%v, want f.txt %d %v %v", fi.Name(), fi.Size(), fi.Mode(), fi.ModTime(), fi.IsDir(), len(data), want.Mode(), want.ModTime())
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Ino != want.Sys().(*syscall.Stat_t).Ino {
				t.Errorf("Sys: %#v, want the inode of f.txt", fi.Sys())
			}
			got, err := io.ReadAll(file.(io.Reader))
			if err != nil || string(got) != string(data) {
				t.Errorf("ReadAll: %q %v", got, err)
			}
			buf := make([]byte, 5)
			if n, err := file.(io.ReaderAt).ReadAt(buf, 7); n != 5 || err != nil || string(buf) != "confi" {
				t.Errorf("ReadAt: %d %v %q", n, err, buf)
			}
			if n, err := file.(io.ReaderAt).ReadAt(buf, int64(len(data)-2)); n != 2 || !errors.Is(err, io.EOF) {
				t.Errorf("ReadAt past the end: %d %v", n, err)
			}
			if off, err := file.(io.Seeker).Seek(0, io.SeekStart); off != 0 || err != nil {
				t.Errorf("Seek: %d %v", off, err)
			}
			if _, err := file.(fs.ReadDirFile).ReadDir(-1); err == nil {
				t.Error("ReadDir of a regular file succeeded")
			}
			if err := file.Close(); err != nil {
				t.Fatal(err)
			}
			if err := file.Close(); err == nil {
				t.Error("a second Close succeeded")
			}
			if _, err := file.(io.Reader).Read(buf); err == nil {
				t.Error("Read after Close succeeded")
			}
			di, err := f.Lstat("sub")
			if err != nil || !di.IsDir() || di.Mode().Perm() != 0o750 {
				t.Errorf("Lstat(sub): %v %v", di, err)
			}
		})
	}
}
