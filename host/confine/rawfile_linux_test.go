package confine

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRawFileEnd: a read that comes up short at the size the file had
// when opened ends it, and the next read says so without the kernel
// (data appended since is not seen, as if read a moment sooner) until a
// seek; a read that fills the buffer, or a file opened empty (a size that
// says nothing, as /proc's), always asks the kernel.
func TestRawFileEnd(t *testing.T) {
	dir := t.TempDir()
	open := func(name, content string) *rawFile {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := fstat(fd, name)
		if err != nil {
			t.Fatal(err)
		}
		r := &rawFile{fd: fd, rel: name, size: fi.Size()}
		t.Cleanup(func() { r.Close() })
		return r
	}
	appendTo := func(name, more string) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(more)
		f.Close()
	}
	read := func(r *rawFile, n int) (string, error) {
		b := make([]byte, n)
		m, err := r.Read(b)
		return string(b[:m]), err
	}

	r := open("short", "0123456789")
	if got, err := read(r, 100); got != "0123456789" || err != nil {
		t.Fatalf("first read: %q %v", got, err)
	}
	appendTo("short", "more")
	if got, err := read(r, 100); got != "" || err != io.EOF {
		t.Fatalf("after a short read at the end: %q %v, want io.EOF", got, err)
	}
	if _, err := r.Seek(0, io.SeekCurrent); err != nil {
		t.Fatal(err)
	}
	if got, err := read(r, 100); got != "more" || err != nil {
		t.Fatalf("after a seek: %q %v, want what was appended", got, err)
	}

	r = open("exact", "0123456789")
	if got, err := read(r, 10); got != "0123456789" || err != nil {
		t.Fatalf("a read filling the buffer: %q %v", got, err)
	}
	appendTo("exact", "more")
	if got, err := read(r, 100); got != "more" || err != nil {
		t.Fatalf("after a read that filled the buffer: %q %v, want the kernel asked", got, err)
	}

	r = open("empty", "")
	appendTo("empty", "late")
	if got, err := read(r, 100); got != "late" || err != nil {
		t.Fatalf("a file opened empty: %q %v, want the kernel asked", got, err)
	}
	if got, err := read(r, 100); got != "" || err != io.EOF {
		t.Fatalf("its end: %q %v", got, err)
	}
}
