//go:build unix

package confine

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/moatdev/moat/host/redact"
)

// stampedInfo is a regular file's FileInfo with the identity and times a
// test gives it: what the kernel would report for a file written twice
// within one tick of its coarse clock, to the same size.
type stampedInfo struct {
	fs.FileInfo
	st sys.Stat_t
}

func (s stampedInfo) Sys() any { return &s.st }

// serveStamped opens path and reads it whole through f's view as the file
// opened by name, its identity stamped (device, inode, both times in ns).
func serveStamped(t *testing.T, f *FS, path, name string, dev, ino uint64, mtime, ctime int64) string {
	t.Helper()
	h, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := h.Stat()
	if err != nil {
		t.Fatal(err)
	}
	info := stampedInfo{FileInfo: fi, st: sys.NewStat_t(fi)}
	info.st.Dev, info.st.Ino, info.st.Mtim, info.st.Ctim = dev, ino, mtime, ctime
	v, err := f.view(h, name, info)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	b, err := io.ReadAll(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestViewRacyNotRemembered: a file whose times are not safely older than
// the finding (it was written in the same tick as it was read, or just
// before) is found in again at its next open, so new content that keeps
// its identity (same inode, size and times: a second write within the
// tick) is served redacted; once the times are settled the findings are
// remembered. The clock is the FS's own (findings.now), so the test does
// not depend on how fast it runs. The code before the racy rule served
// the second content, the secret, as it is.
func TestViewRacyNotRemembered(t *testing.T) {
	token := strings.Join([]string{"ghp_", "R8fQ2mZx7LwK1pVt9sNb3cYh5JdUe6Ga4Xo0"}, "")
	for _, filler := range []string{"", strings.Repeat("an ordinary line\n", 2*viewInMemory/17)} {
		// A small file is found in whole, a large one as it is read
		// (splice): both remember through findings.put.
		testRacy(t, filler, token)
	}
}

func testRacy(t *testing.T, filler, token string) {
	plain := filler + "v: " + strings.Repeat("x", len(token)) + "\n"
	secret := filler + "v: " + token + "\n"
	dir := t.TempDir()
	for name, body := range map[string]string{"plain": plain, "secret": secret} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	for _, c := range []struct {
		name     string
		now      time.Time // the clock when both are read
		redacted bool      // the second content is found in
		noCtime  bool      // the file system keeps no change time (0)
	}{
		{"same tick", stamp, true, false},
		{"within the margin", stamp.Add(RacyMargin - time.Millisecond), true, false},
		{"times in the future", stamp.Add(-time.Hour), true, false},
		{"no change time", stamp.Add(time.Hour), true, true},
		{"settled", stamp.Add(RacyMargin + time.Millisecond), false, false},
	} {
		t.Run(fmt.Sprintf("%s/%d", c.name, len(plain)), func(t *testing.T) {
			f := &FS{}
			f.SetRedactor(redact.New())
			f.seen.now = func() time.Time { return c.now }
			open := func(name string) string {
				ctime := stamp.UnixNano()
				if c.noCtime {
					ctime = 0
				}
				return serveStamped(t, f, filepath.Join(dir, name), "a.txt", 7, 42, stamp.UnixNano(), ctime)
			}
			if got := open("plain"); got != plain {
				t.Fatalf("the first content: %q", got)
			}
			got := open("secret")
			switch {
			case c.redacted && got != filler+"v: [redacted: github-pat]\n":
				t.Errorf("the second content, with the first's identity, is served as %q", got[len(filler):])
			case !c.redacted && got != secret:
				// The settled file's findings were remembered: the
				// identity is what the memo trusts (a real second
				// write would have changed the change time).
				t.Errorf("a settled file was found in again: %q", got[len(filler):])
			}
		})
	}
}
