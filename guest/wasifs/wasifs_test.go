//go:build unix || wasip1

package wasifs_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/moatdev/moat/guest/wasifs"
)

func tree(t testing.TB) string {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"a.txt":         "alpha\n",
		"sub/b.txt":     "beta\n",
		"sub/deep/c.go": "package c\n",
		"empty":         "",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFS holds wasifs to the io/fs contract, the same checks os.DirFS passes.
func TestFS(t *testing.T) {
	dir := tree(t)
	if err := fstest.TestFS(wasifs.New(dir), "a.txt", "sub/b.txt", "sub/deep/c.go", "empty", "link"); err != nil {
		t.Fatal(err)
	}
}

// TestSameAsDirFS compares every answer with os.DirFS's, which the guest
// used before.
func TestSameAsDirFS(t *testing.T) {
	dir := tree(t)
	w, d := wasifs.New(dir), os.DirFS(dir)
	for _, name := range []string{"a.txt", "sub/b.txt", "empty", "link", "sub", ".", "missing", "../x", "/abs", "sub/../a.txt", "a.txt/x"} {
		got, gerr := fs.ReadFile(w, name)
		want, werr := fs.ReadFile(d, name)
		if string(got) != string(want) || errno(gerr) != errno(werr) {
			t.Errorf("ReadFile(%q) = %q, %v; os.DirFS: %q, %v", name, got, gerr, want, werr)
		}
		gi, gerr := fs.Lstat(w, name)
		wi, werr := fs.Lstat(d, name)
		if errno(gerr) != errno(werr) || gerr == nil && (gi.Mode() != wi.Mode() || gi.Size() != wi.Size()) {
			t.Errorf("Lstat(%q) differs: %v, %v", name, gerr, werr)
		}
	}
	if target, err := fs.ReadLink(w, "link"); target != "a.txt" || err != nil {
		t.Errorf("ReadLink(link) = %q, %v", target, err)
	}
}

// errno reduces an error to what the tools look at.
func errno(err error) string {
	var e syscall.Errno
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Error()
	case errors.Is(err, fs.ErrInvalid):
		return "invalid"
	}
	return err.Error()
}

func TestClosedFile(t *testing.T) {
	f, err := wasifs.New(tree(t)).Open("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(make([]byte, 8)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.Stat(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Stat after Close: %v", err)
	}
}

// BenchmarkOpenRead opens and reads every file of a tree, through os.DirFS
// and through wasifs. Natively the two are close; run it in the guest's
// runtime (make bench-guest) to see the difference that matters.
func BenchmarkOpenRead(b *testing.B) {
	dir := os.Getenv("WASIFS_BENCH_DIR")
	if dir == "" {
		dir = tree(b)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	buf := make([]byte, 64<<10)
	for _, c := range []struct {
		name string
		fsys fs.FS
	}{{"os.DirFS", os.DirFS(dir)}, {"wasifs", wasifs.New(dir)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, name := range files {
					f, err := c.fsys.Open(name)
					if err != nil {
						continue
					}
					for {
						if _, err := f.Read(buf); err != nil {
							if err != io.EOF {
								b.Fatal(err)
							}
							break
						}
					}
					f.Close()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(files)), "ns/file")
		})
	}
}

// TestReadDirWide lists a folder that takes several fd_readdir buffers,
// with names of every length up to 200 so that entries are cut off at a
// buffer's end, and compares it with os.ReadDir's.
func TestReadDirWide(t *testing.T) {
	dir := t.TempDir()
	for i := range 5000 {
		name := fmt.Sprintf("%05d-%s", i, strings.Repeat("n", i%195))
		if i%7 == 0 {
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wasifs.New(filepath.Dir(dir)).ReadDir(filepath.Base(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() {
			t.Fatalf("entry %d: %q %v, want %q %v", i, got[i].Name(), got[i].Type(), want[i].Name(), want[i].Type())
		}
	}
	// In the folder's own order: the same entries, each once.
	anyOrder, err := wasifs.New(filepath.Dir(dir)).ReadDirAnyOrder(filepath.Base(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(anyOrder, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if len(anyOrder) != len(want) {
		t.Fatalf("ReadDirAnyOrder: %d entries, want %d", len(anyOrder), len(want))
	}
	for i := range want {
		if anyOrder[i].Name() != want[i].Name() || anyOrder[i].Type() != want[i].Type() {
			t.Fatalf("ReadDirAnyOrder, entry %d: %q %v, want %q %v", i, anyOrder[i].Name(), anyOrder[i].Type(), want[i].Name(), want[i].Type())
		}
	}
	// ScanDir: the same entries, each once, and names that stay whole
	// across the buffer's end.
	scanned := map[string]fs.FileMode{}
	if err := wasifs.New(filepath.Dir(dir)).ScanDir(filepath.Base(dir), func(name string, typ fs.FileMode) {
		if _, dup := scanned[name]; dup {
			t.Fatalf("ScanDir: %q twice", name)
		}
		scanned[strings.Clone(name)] = typ
	}); err != nil {
		t.Fatal(err)
	}
	if len(scanned) != len(want) {
		t.Fatalf("ScanDir: %d entries, want %d", len(scanned), len(want))
	}
	for _, e := range want {
		if typ, ok := scanned[e.Name()]; !ok || typ != e.Type() {
			t.Fatalf("ScanDir: %q %v, want %v (listed %v)", e.Name(), typ, e.Type(), ok)
		}
	}
	if err := wasifs.New(filepath.Dir(dir)).ScanDir("no-such-folder", func(string, fs.FileMode) {}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ScanDir of a missing folder: %v", err)
	}
	// In batches of 7 on an open folder (list_dir's way): the same
	// entries, each once, then io.EOF.
	f, err := wasifs.New(filepath.Dir(dir)).Open(filepath.Base(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]fs.FileMode{}
	for {
		batch, err := f.(fs.ReadDirFile).ReadDir(7)
		for _, e := range batch {
			if _, dup := seen[e.Name()]; dup {
				t.Fatalf("%q listed twice", e.Name())
			}
			seen[e.Name()] = e.Type()
		}
		if err == io.EOF {
			break
		}
		if err != nil || len(batch) == 0 {
			t.Fatalf("ReadDir(7): %d entries, %v", len(batch), err)
		}
	}
	for _, e := range want {
		if typ, ok := seen[e.Name()]; !ok || typ != e.Type() {
			t.Fatalf("ReadDir(7): %q %v, want %v (listed %v)", e.Name(), typ, e.Type(), ok)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("ReadDir(7): %d entries, want %d", len(seen), len(want))
	}
}

// TestReadDirAnyOrderSkips: the files skipFile rules out are left out,
// folders never, whatever their names; the rest are as listed (by
// ReadDirSkip, the same sorted by name).
func TestReadDirAnyOrderSkips(t *testing.T) {
	dir := t.TempDir()
	for i := range 3000 {
		name := fmt.Sprintf("f%04d.%s", i, []string{"go", "txt", "md"}[i%3])
		if i%10 == 0 {
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skip := func(name string) bool { return !strings.HasSuffix(name, ".go") }
	fsys := wasifs.New(filepath.Dir(dir))
	got, err := fsys.ReadDirAnyOrder(filepath.Base(dir), skip)
	if err != nil {
		t.Fatal(err)
	}
	// ReadDirSkip: the same entries, sorted by name.
	sorted, err := fsys.ReadDirSkip(filepath.Base(dir), skip)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(sorted, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }) {
		t.Error("ReadDirSkip: not sorted by name")
	}
	if len(sorted) != len(got) {
		t.Errorf("ReadDirSkip: %d entries, ReadDirAnyOrder %d", len(sorted), len(got))
	}
	all, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range all {
		if e.IsDir() || !skip(e.Name()) {
			want = append(want, fmt.Sprint(e.Name(), e.IsDir()))
		}
	}
	var names []string
	for _, e := range got {
		names = append(names, fmt.Sprint(e.Name(), e.IsDir()))
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("%d entries, want %d (first: %v)", len(names), len(want), names[:min(5, len(names))])
	}
}

// TestReadFiles reads a folder's small files in one call (in the guest,
// the host's moat.read_files; natively, os): each regular file whole and
// back to back; a folder, a symlink, a missing name, a name of two
// components and one too large for the buffer left to Open (-1); and a
// file that no longer fits once others took the buffer not decided, so
// that the next call starts with it.
func TestReadFiles(t *testing.T) {
	dir := tree(t)
	big := strings.Repeat("b", 100)
	for name, data := range map[string]string{"sub/big.txt": big, "sub/x.txt": "ex\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := wasifs.New(dir)
	names := []string{"b.txt", "deep", "missing", "../a.txt", "deep/c.go", "x.txt", "big.txt"}
	buf := make([]byte, 64)
	sizes := make([]int32, len(names))
	n := w.ReadFiles("sub", names, buf, sizes)
	if n != len(names)-1 {
		t.Fatalf("decided %d names (sizes %v), want %d: big.txt does not fit after the others", n, sizes[:n], len(names)-1)
	}
	want := []int32{5, -1, -1, -1, -1, 3}
	if !slices.Equal(sizes[:n], want) {
		t.Fatalf("sizes %v, want %v", sizes[:n], want)
	}
	if got := string(buf[:8]); got != "beta\nex\n" {
		t.Fatalf("buffer holds %q, want the files back to back", got)
	}
	// First in a call, a file too large for the whole buffer is left to Open.
	if n := w.ReadFiles("sub", []string{"big.txt", "b.txt"}, buf, sizes); n != 2 || sizes[0] != -1 || sizes[1] != 5 || string(buf[:5]) != "beta\n" {
		t.Fatalf("big first: decided %d, sizes %v, buffer %q", n, sizes[:n], buf[:5])
	}
	// The root folder, and a symlink to a file (never followed).
	if n := w.ReadFiles(".", []string{"a.txt", "link", "empty"}, buf, sizes); n != 3 || !slices.Equal(sizes[:3], []int32{6, -1, 0}) || string(buf[:6]) != "alpha\n" {
		t.Fatalf("root: decided %d, sizes %v, buffer %q", n, sizes[:n], buf[:6])
	}
	// A folder that is not one decides every name, as none can be read.
	if n := w.ReadFiles("a.txt", []string{"x"}, buf, sizes); n != 1 || sizes[0] != -1 {
		t.Fatalf("a file as the folder: decided %d, sizes %v", n, sizes[:n])
	}
}
