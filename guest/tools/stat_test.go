//go:build unix || wasip1

package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/wasifs"
)

// TestStatModeAndTimes: through wasifs (in the guest, the host's
// moat.stat) stat shows a file's permission bits and its times, a
// folder's, and a symlink's own, never its target's.
func TestStatModeAndTimes(t *testing.T) {
	root := t.TempDir()
	f := filepath.Join(root, "secret-ish.txt")
	if err := os.WriteFile(f, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f, 0o640); err != nil {
		t.Fatal(err)
	}
	access := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	modify := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(f, access, modify); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "d"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "d"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("secret-ish.txt", filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	fsys := wasifs.New(root)
	got := call(t, fsys, proto.Stat, map[string]any{"path": "secret-ish.txt"}, proto.Limits{}).Text
	lines := strings.Split(got, "\n")
	// Under wasip1 chmod changes nothing, and wazero makes a file 0600 and
	// a folder 0700, the modes Go's wasip1 port reports of every file
	// and folder; the host's answer shows in the link's 0777 and the
	// times, which that port does not pass on.
	wantMode, wantDir := "mode: 0640 (-rw-r-----)", "\nmode: 0750 (drwxr-x---)\n"
	if runtime.GOOS == "wasip1" {
		wantMode, wantDir = "mode: 0600 (-rw-------)", "\nmode: 0700 (drwx------)\n"
	}
	want := []string{"path: secret-ish.txt", "kind: file", "size: 6 bytes", wantMode,
		"modified: 2026-02-03T04:05:06Z", "accessed: 2026-01-02T03:04:05Z"}
	if len(lines) < len(want)+1 {
		t.Fatalf("stat: %q", got)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("stat line %d: got %q, want %q\n%s", i+1, lines[i], w, got)
		}
	}
	changed, ok := strings.CutPrefix(lines[len(want)], "changed: ")
	if _, err := time.Parse(time.RFC3339, changed); !ok || err != nil {
		t.Errorf("no status-change time after the access time:\n%s", got)
	}
	if got := call(t, fsys, proto.Stat, map[string]any{"path": "d"}, proto.Limits{}).Text; !strings.Contains(got, wantDir) {
		t.Errorf("stat d:\n%s", got)
	}
	got = call(t, fsys, proto.Stat, map[string]any{"path": "l"}, proto.Limits{}).Text
	if !strings.Contains(got, "\nmode: 0777 (lrwxrwxrwx)\n") || !strings.HasSuffix(got, "\ntarget: secret-ish.txt") {
		t.Errorf("stat l (its own mode, not its target's 0640):\n%s", got)
	}
}

func TestModeString(t *testing.T) {
	for _, c := range []struct {
		kind fs.FileMode
		bits uint32
		want string
	}{
		{0, 0o644, "-rw-r--r--"},
		{fs.ModeDir, 0o1777, "drwxrwxrwt"},
		{0, 0o4755, "-rwsr-xr-x"},
		{0, 0o2644, "-rw-r-Sr--"},
		{fs.ModeDir, 0o1700, "drwx-----T"},
		{fs.ModeNamedPipe, 0o600, "prw-------"},
		{fs.ModeDevice | fs.ModeCharDevice, 0o666, "crw-rw-rw-"},
		{fs.ModeDevice, 0o660, "brw-rw----"},
		{fs.ModeSocket, 0o755, "srwxr-xr-x"},
	} {
		if got := modeString(c.kind, c.bits); got != c.want {
			t.Errorf("modeString(%v, %04o) = %q, want %q", c.kind, c.bits, got, c.want)
		}
	}
}
