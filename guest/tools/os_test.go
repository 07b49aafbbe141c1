//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
)

// allocated runs f and returns how many bytes it allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRealFilesStayBounded uses the real filesystem: a 10 MB one-line file,
// a 4 GiB sparse file and a 20 MB many-line file must cost memory for the
// budget, not for the file, and a FIFO must be refused without blocking.
func TestRealFilesStayBounded(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one-line.txt", strings.Repeat("abcdefghij", 1_000_000)+"needle\n")
	write("many-lines.txt", strings.Repeat("a line of text that is not very long\n", 540_000))
	sparse, err := os.Create(filepath.Join(root, "sparse.img"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(4 << 30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	sparse.Close()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	const budget = proto.DefaultMaxReadBytes
	const slack = 6 * budget // read buffers, the output, its copy into a string, JSON

	var resp proto.Response
	n := allocated(func() { resp = call(t, fsys, proto.ReadFile, map[string]any{"path": "one-line.txt"}, proto.Limits{}) })
	if want := "\n\n[truncated: line 1 of one-line.txt is longer than the read budget; showed its first 262.1 KB]"; !strings.HasSuffix(resp.Text, want) ||
		len(resp.Text) != budget+len(want) {
		t.Errorf("one line: %d bytes, ends %q", len(resp.Text), resp.Text[max(0, len(resp.Text)-120):])
	}
	if n > slack {
		t.Errorf("read_file of a 10 MB line allocated %d bytes", n)
	}

	n = allocated(func() {
		resp = call(t, fsys, proto.ReadFile, map[string]any{"path": "many-lines.txt", "offset": 10}, proto.Limits{})
	})
	if want := "\n\n[truncated: showed lines 10-7093 of many-lines.txt (262.1 KB of 20.0 MB); call read_file with offset=7094 to read on]"; !strings.HasSuffix(resp.Text, want) {
		t.Errorf("many lines: ends %q", resp.Text[max(0, len(resp.Text)-160):])
	}
	if n > slack {
		t.Errorf("read_file of a 20 MB file allocated %d bytes", n)
	}

	start := time.Now()
	n = allocated(func() { resp = call(t, fsys, proto.ReadFile, map[string]any{"path": "sparse.img"}, proto.Limits{}) })
	if want := "error: binary file: sparse.img (4.3 GB, binary data)"; resp.Text != want {
		t.Errorf("sparse: got %q, want %q", resp.Text, want)
	}
	if d := time.Since(start); d > 2*time.Second || n > slack {
		t.Errorf("sparse file took %v and %d bytes", d, n)
	}

	done := make(chan proto.Response, 1)
	go func() { done <- call(t, fsys, proto.ReadFile, map[string]any{"path": "fifo"}, proto.Limits{}) }()
	select {
	case resp = <-done:
		if want := "error: not a regular file: fifo (named pipe)"; resp.Text != want {
			t.Errorf("fifo: got %q", resp.Text)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read_file on a FIFO blocked")
	}

	// grep skips the sparse file on its first block and the FIFO by type,
	// and finds the needle at the end of the 10 MB line, held whole.
	n = allocated(func() { resp = call(t, fsys, proto.Grep, map[string]any{"pattern": "needle"}, proto.Limits{}) })
	if want := "one-line.txt:1: …" + strings.Repeat("abcdefghij", 7)[6:70] + "needle"; resp.Text != want {
		t.Errorf("grep: got %.200q", resp.Text)
	}
	// The buffer doubles until the 10 MB line fits: 32 MB in all.
	if n > slack+4*10_000_000 {
		t.Errorf("grep allocated %d bytes", n)
	}
	resp = call(t, fsys, proto.ListDir, map[string]any{}, proto.Limits{})
	if want := "fifo (named pipe)\nmany-lines.txt\none-line.txt\nsparse.img"; resp.Text != want {
		t.Errorf("list_dir: %q", resp.Text)
	}
}
