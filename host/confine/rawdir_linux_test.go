package confine

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestRawDirListsAsOS: a rawDir lists what os.ReadDir lists, names and
// types, whole or in batches across several getdents buffers, ends with
// io.EOF, lists again after a seek to 0, and its entries' Info is lstat's.
func TestRawDirListsAsOS(t *testing.T) {
	dir := t.TempDir()
	for i := range 3000 {
		name := filepath.Join(dir, fmt.Sprintf("a-rather-long-name-to-fill-the-buffer-%04d", i))
		if i%10 == 0 {
			os.Mkdir(name, 0o755)
			continue
		}
		os.WriteFile(name, nil, 0o644)
	}
	os.Symlink("nowhere", filepath.Join(dir, "link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantS := describe(t, want)
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := &rawDir{rawFile: rawFile{fd: fd, rel: "d"}}
	defer d.Close()
	for _, n := range []int{-1, 7, 1000} {
		var got []fs.DirEntry
		for {
			batch, err := d.ReadDir(n)
			got = append(got, batch...)
			if n <= 0 {
				if err != nil {
					t.Fatal(err)
				}
				break
			}
			if err == io.EOF {
				break
			}
			if err != nil || len(batch) == 0 || len(batch) > n {
				t.Fatalf("ReadDir(%d): %d entries, %v", n, len(batch), err)
			}
		}
		if g := describe(t, got); !slices.Equal(g, wantS) {
			t.Fatalf("ReadDir(%d): %d entries, want %d", n, len(g), len(wantS))
		}
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
	}
}

// describe is each entry's name, type and lstat mode, sorted.
func describe(t *testing.T, ents []fs.DirEntry) []string {
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(e.Name(), e.Type(), e.IsDir(), fi.Mode()))
	}
	slices.Sort(out)
	return out
}

// TestRawDirPooledBuffer: folders listed one after another through one
// pool of buffers (as a walk lists them) each list what os.ReadDir lists,
// and the entries of a folder already closed, its buffer since reused by
// the next, keep their names.
func TestRawDirPooledBuffer(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, d := range []string{"first", "second"} {
		dir := filepath.Join(root, d)
		os.Mkdir(dir, 0o755)
		for i := range 2000 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-file-with-a-name-long-enough-%04d", d, i)), nil, 0o644)
		}
		dirs = append(dirs, dir)
	}
	names := func(ents []fs.DirEntry) []string {
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		slices.Sort(out)
		return out
	}
	pool := newDirBufs()
	for round := range 5 {
		var kept [][]fs.DirEntry
		for _, dir := range dirs {
			fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			d := &rawDir{rawFile: rawFile{fd: fd, rel: filepath.Base(dir)}, bufs: pool}
			ents, err := d.ReadDir(-1)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil || d.buf != nil {
				t.Fatalf("Close: %v, buffer kept: %v", err, d.buf != nil)
			}
			kept = append(kept, ents)
		}
		for i, dir := range dirs {
			want, _ := os.ReadDir(dir)
			if g, w := names(kept[i]), names(want); !slices.Equal(g, w) {
				t.Fatalf("round %d, %s: %d names, want %d (first %q, want %q)", round, dir, len(g), len(w), g[0], w[0])
			}
		}
	}
}
