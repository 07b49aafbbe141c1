//go:build unix

package confine_test

import (
	"bytes"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/redact"
)

// Test secrets are assembled at run time so that no secret scanner takes
// this file for a leak.
func join(parts ...string) string { return strings.Join(parts, "") }

var (
	viewToken = join("ghp_", "R8fQ2mZx7LwK1pVt9sNb3cYh5JdUe6Ga4Xo0")
	viewKey   = join("-----BEGIN RSA ", "PRIVATE KEY-----\n",
		"MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8rN5oH1fQmYxLk2JdV7wE0sR4\n",
		"qB6gT8yZ1cH5nKj3LmP9vX2wA7uE4rF0iD6sG3hJ8kL1mN5oP2qR9tU4vW7xY0zB\n",
		"-----END RSA ", "PRIVATE KEY-----")
)

func redactedFS(t *testing.T, root string, k confine.Kind) *confine.FS {
	t.Helper()
	f := newFS(t, root, k)
	f.SetRedactor(redact.New())
	return f
}

// leaks reports which of the secrets' pieces of 6 bytes or more b holds.
func leaks(b []byte) []string {
	var out []string
	for _, s := range []string{viewToken, viewKey} {
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, "-----") {
				continue // the BEGIN and END lines are not secret
			}
			for i := 0; i+12 <= len(line); i += 6 {
				if bytes.Contains(b, []byte(line[i:i+12])) {
					out = append(out, line[i:i+12])
				}
			}
		}
	}
	return out
}

// TestViewWindows: a file is its redacted view whatever window of it is
// read (ReadAt at every offset and length, Read after Seek), its open
// size is the view's, and the batch read gives the same view: a window
// that stops before the key's END line, or cuts the token, shows none of
// their bytes. Small files (served from memory) and large ones (spliced
// from the file) alike.
func TestViewWindows(t *testing.T) {
	for _, k := range resolvers(t) {
		for _, big := range []bool{false, true} {
			name := k.String() + map[bool]string{false: "/small", true: "/large"}[big]
			t.Run(name, func(t *testing.T) {
				root := t.TempDir()
				var b strings.Builder
				if big {
					for b.Len() < 3<<20 {
						b.WriteString("an ordinary line of a long log file\n")
					}
				}
				b.WriteString("token: " + viewToken + "\n" + viewKey + "\nplain\n")
				raw := b.String()
				must(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte(raw), 0o644))
				want := redact.View([]byte(raw), redact.New().FindFile("notes.txt", []byte(raw)))
				if !bytes.Contains(want, []byte("[redacted: private-key]")) || !bytes.Contains(want, []byte("[redacted: github-pat]")) {
					t.Fatalf("the view has no marks: %q", want[max(0, len(want)-200):])
				}
				f := redactedFS(t, root, k)
				file, err := f.Open("notes.txt")
				must(t, err)
				defer file.Close()
				// A small file's open size is its view's; a large one's is
				// the file's until it has been read to its end.
				fi, err := file.Stat()
				must(t, err)
				if opened := map[bool]int{false: len(want), true: len(raw)}[big]; fi.Size() != int64(opened) {
					t.Errorf("open size %d, want %d", fi.Size(), opened)
				}
				all, err := io.ReadAll(file)
				must(t, err)
				if !bytes.Equal(all, want) {
					t.Fatalf("read whole is not the view")
				}
				if fi, err = file.Stat(); err != nil || fi.Size() != int64(len(want)) {
					t.Errorf("size once read %d, %v; view %d", fi.Size(), err, len(want))
				}
				// A file no one read yet, read at random offsets (found in
				// only as far as each read needs).
				again, err := redactedFS(t, root, k).Open("notes.txt")
				must(t, err)
				defer again.Close()
				ra := again.(io.ReaderAt)
				rng := rand.New(rand.NewPCG(1, 2))
				base := max(0, len(want)-300)
				for range 2000 {
					off := base + rng.IntN(len(want)-base)
					n := 1 + rng.IntN(len(want)-off)
					p := make([]byte, n)
					got, err := ra.ReadAt(p, int64(off))
					if got != n || (err != nil && err != io.EOF) {
						t.Fatalf("ReadAt(%d, %d) = %d, %v", off, n, got, err)
					}
					if !bytes.Equal(p, want[off:off+n]) {
						t.Fatalf("ReadAt(%d, %d) is not the view's window", off, n)
					}
					if l := leaks(p); l != nil {
						t.Fatalf("ReadAt(%d, %d) shows %q", off, n, l)
					}
				}
				s := file.(io.Seeker)
				_, err = s.Seek(int64(base+10), io.SeekStart)
				must(t, err)
				rest, err := io.ReadAll(file)
				must(t, err)
				if !bytes.Equal(rest, want[base+10:]) {
					t.Errorf("Read after Seek is not the view")
				}
				if !big {
					_, ctl := f.Mount()
					sizes, texts := readFiles(t, ctl, ".", []string{"notes.txt"}, 1<<20)
					if sizes[0] < 0 || texts[0] != string(want) {
						t.Errorf("batch read: %d %q, want the view", sizes[0], texts[0])
					}
				}
			})
		}
	}
}

// TestViewRemembers: a file's findings are remembered until it changes;
// a file changed in place (same size, new secret) is found in again.
func TestViewRemembers(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "a.txt")
			plain := strings.Repeat("x", len(viewToken))
			must(t, os.WriteFile(p, []byte("v: "+plain+"\n"), 0o644))
			f := redactedFS(t, root, k)
			read := func() string {
				b, err := fs.ReadFile(f, "a.txt")
				must(t, err)
				return string(b)
			}
			if got := read(); got != "v: "+plain+"\n" {
				t.Fatalf("plain file: %q", got)
			}
			fh, err := os.OpenFile(p, os.O_WRONLY, 0)
			must(t, err)
			_, err = fh.WriteAt([]byte(viewToken), 3)
			must(t, err)
			fh.Close()
			for range 2 {
				if got := read(); got != "v: [redacted: github-pat]\n" {
					t.Fatalf("after the change: %q", got)
				}
			}
			_, ctl := f.Mount()
			if _, texts := readFiles(t, ctl, ".", []string{"a.txt"}, 1<<16); texts[0] != "v: [redacted: github-pat]\n" {
				t.Fatalf("batch read after the change: %q", texts[0])
			}
		})
	}
}

// TestViewBatchTooLarge: a file whose view does not fit what is left of
// the batch's buffer is left to the guest's open, and the buffer holds
// none of its bytes.
func TestViewBatchTooLarge(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := t.TempDir()
			aws := join("AKIA", "Z7Q3KX4LMN2PRT5W")
			body := "k " + aws + "\n" // the mark is longer than the key
			must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte(body), 0o644))
			f := redactedFS(t, root, k)
			_, ctl := f.Mount()
			buf := make([]byte, len(body)+2)
			sizes := make([]int32, 1)
			ctl.ReadFiles(".", []string{"a.txt"}, buf, sizes)
			if sizes[0] >= 0 {
				t.Errorf("read %q into a buffer too small for its view", buf[:sizes[0]])
			}
			if bytes.Contains(buf, []byte(aws[4:])) {
				t.Errorf("the buffer holds the key: %q", buf)
			}
		})
	}
}

// TestViewHugeSparse: a large file is found in only as far as it is read:
// the first MiBs of a 1 TiB sparse file are served at once (finding in the
// whole of it first would take the better part of an hour).
func TestViewHugeSparse(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "big.img")
	must(t, os.WriteFile(p, []byte("token "+viewToken+"\n"), 0o644))
	if err := os.Truncate(p, 1<<40); err != nil {
		t.Skipf("this file system cannot hold a 1 TiB sparse file: %v", err)
	}
	for _, k := range resolvers(t) {
		file, err := redactedFS(t, root, k).Open("big.img")
		must(t, err)
		head := make([]byte, 4<<20)
		if _, err := io.ReadFull(file, head); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(head, []byte("token [redacted: github-pat]\n\x00")) {
			t.Errorf("%s: the head is %q", k, head[:40])
		}
		file.Close()
	}
}

// TestViewResumes: a large file left before its end (a grep that stops
// at a binary file's first NUL) is remembered as far as it was read, and
// the next open goes on from there: its view is the whole file's, secrets
// on either side of where the first reader stopped included.
func TestViewResumes(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := t.TempDir()
			var b strings.Builder
			for b.Len() < 1<<20-30 {
				b.WriteString("an ordinary line of a long log file\n")
			}
			b.WriteString("token: " + viewToken + "\n") // across the first piece's end
			for b.Len() < 3<<20 {
				b.WriteString("an ordinary line of a long log file\n")
			}
			b.WriteString(viewKey + "\n")
			raw := b.String()
			must(t, os.WriteFile(filepath.Join(root, "log.txt"), []byte(raw), 0o644))
			want := redact.View([]byte(raw), redact.New().FindFile("log.txt", []byte(raw)))
			f := redactedFS(t, root, k)
			for _, stop := range []int{100, 2 << 20, len(want)} {
				file, err := f.Open("log.txt")
				must(t, err)
				got := make([]byte, stop)
				_, err = io.ReadFull(file, got)
				must(t, err)
				file.Close()
				if !bytes.Equal(got, want[:stop]) {
					t.Fatalf("the first %d bytes are not the view's", stop)
				}
				if l := leaks(got); l != nil {
					t.Fatalf("the first %d bytes show %q", stop, l)
				}
			}
		})
	}
}

// TestViewBuffersReused: the buffers of views held in memory go back for
// the next files' when closed, and a view open beside others, or read
// after others were opened, read and closed, is still its own file's; a
// closed one reads nothing.
func TestViewBuffersReused(t *testing.T) {
	root := t.TempDir()
	want := map[string]string{}
	for i := range 40 {
		name := filepath.Join("d", strings.Repeat("f", 1+i%5)+string(rune('a'+i%26))+".txt")
		if _, ok := want[name]; ok {
			continue
		}
		text := strings.Repeat(name+" line\n", 1+i*37)
		if i%7 == 0 {
			text += "v: " + viewToken + "\n"
		}
		must(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
		want[name] = strings.ReplaceAll(text, viewToken, "[redacted: github-pat]")
	}
	f := redactedFS(t, root, confine.Auto)
	var held []fs.File
	var names []string
	for round := range 3 {
		for name := range want {
			fh, err := f.Open(name)
			must(t, err)
			held, names = append(held, fh), append(names, name)
			if len(held) < 4 {
				continue
			}
			// Read and close the oldest of the four open.
			b, err := io.ReadAll(held[0])
			must(t, err)
			if string(b) != want[names[0]] {
				t.Fatalf("round %d: %s read %d bytes, not its own %d:\n%.100q", round, names[0], len(b), len(want[names[0]]), b)
			}
			must(t, held[0].Close())
			if n, err := held[0].Read(make([]byte, 10)); n != 0 || err == nil {
				t.Fatalf("%s read %d bytes after its close (%v)", names[0], n, err)
			}
			held, names = held[1:], names[1:]
		}
	}
}
