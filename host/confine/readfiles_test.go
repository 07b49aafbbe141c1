//go:build unix

package confine_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
	"github.com/moatdev/moat/host/policy"
)

// readFiles is MountControl.ReadFiles with a buffer of size bytes: the
// sizes it decided and the content of each file it read ("" for -1).
func readFiles(t *testing.T, ctl *confine.MountControl, dir string, names []string, size int) ([]int32, []string) {
	t.Helper()
	buf := make([]byte, size)
	sizes := make([]int32, len(names))
	done := make(chan int, 1)
	go func() { done <- ctl.ReadFiles(dir, names, buf, sizes) }()
	var n int
	select {
	case n = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("ReadFiles(%q, %q) did not return: it blocked on something", dir, names)
	}
	var texts []string
	at := 0
	for _, s := range sizes[:n] {
		if s < 0 {
			texts = append(texts, "")
			continue
		}
		texts = append(texts, string(buf[at:at+int(s)]))
		at += int(s)
	}
	return sizes[:n], texts
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadFilesSwapped: a folder's files swapped, after the guest listed
// them, for a FIFO, a symlink out of the root and a symlink inside it are
// left to the guest's own open (-1), which answers as the walker does; a
// symlink never leads out, and the FIFO is not waited on. A file read twice
// reads the same.
func TestReadFilesSwapped(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/d/", "ROOT/d/fifo.txt: a", "ROOT/d/out.txt: b", "ROOT/d/in.txt: c", "ROOT/d/keep.txt: keep",
				"ROOT/d/target.txt: inside",
			}})
			_, ctl := newFS(t, root, k).Mount()
			defer ctl.Revoke()
			d := filepath.Join(root, "d")
			must(t, os.Remove(filepath.Join(d, "fifo.txt")))
			must(t, syscall.Mkfifo(filepath.Join(d, "fifo.txt"), 0o644))
			must(t, os.Remove(filepath.Join(d, "out.txt")))
			must(t, os.Symlink("../../outside/secret", filepath.Join(d, "out.txt")))
			must(t, os.Remove(filepath.Join(d, "in.txt")))
			must(t, os.Symlink("target.txt", filepath.Join(d, "in.txt")))
			sizes, texts := readFiles(t, ctl, "d", []string{"fifo.txt", "out.txt", "in.txt", "keep.txt", "keep.txt"}, 1024)
			// in.txt may be read as its target, inside the root, as the
			// guest's own open of it would (os.Root's walker), or left to
			// the guest (openat2 opens no symlink).
			inside := sizes[2] == -1 || texts[2] == "inside"
			if len(sizes) != 5 || sizes[0] != -1 || sizes[1] != -1 || !inside || texts[3] != "keep" || texts[4] != "keep" {
				t.Fatalf("sizes %v, texts %q", sizes, texts)
			}
		})
	}
}

// TestReadFilesDenied: what the deny-list refuses, ReadFiles never reads:
// a name a built-in rule refuses, a --deny path, any file of a folder a
// rule refuses, and a folder reached through a symlink to a denied one;
// nor a name that is not one component of the folder.
func TestReadFilesDenied(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/d/", "ROOT/d/.env: " + confinetest.Secret, "ROOT/d/id_rsa: " + confinetest.Secret,
				"ROOT/d/ok.txt: ok", "ROOT/d/no.txt: " + confinetest.Secret,
				"ROOT/d/sub/", "ROOT/d/sub/x.txt: " + confinetest.Secret, "ROOT/g => .git",
			}})
			pol, err := policy.New([]string{"d/no.txt", "d/sub"}, nil)
			must(t, err)
			f, err := confine.New(root, k, pol)
			must(t, err)
			defer f.Close()
			_, ctl := f.Mount()
			defer ctl.Revoke()
			for _, c := range []struct {
				dir   string
				names []string
			}{
				{"d", []string{".env", "id_rsa", "no.txt", "sub", "ok.txt", "sub/x.txt", "../d/.env", "..", ".", "", "ok.txt\x00"}},
				{"d/sub", []string{"x.txt"}},
				{".git", []string{"config"}},
				{"g", []string{"config"}},
				{"d/../..", []string{"outside/secret", "secret"}},
				{"../outside", []string{"secret"}},
			} {
				sizes, texts := readFiles(t, ctl, c.dir, c.names, 1024)
				for i, s := range sizes {
					want := int32(-1)
					if c.dir == "d" && c.names[i] == "ok.txt" {
						want = 2
					}
					if s != want || strings.Contains(texts[i], confinetest.Secret) {
						t.Errorf("%s/%q: size %d (%q), want %d", c.dir, c.names[i], s, texts[i], want)
					}
				}
				if len(sizes) != len(c.names) {
					t.Errorf("%s: decided %d of %d names", c.dir, len(sizes), len(c.names))
				}
			}
		})
	}
}

// TestReadFilesBuffer: a file that does not fit in what is left of the
// buffer ends the call before it, so the next call starts with it; one
// too large for the whole buffer is left to the guest; an empty file
// reads as empty; and once the mount is revoked nothing is read.
func TestReadFilesBuffer(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/a.txt: aaaa", "ROOT/b.txt: " + strings.Repeat("b", 20), "ROOT/e.txt", "ROOT/c.txt: cc",
			}})
			must(t, os.WriteFile(filepath.Join(root, "e.txt"), nil, 0o644))
			_, ctl := newFS(t, root, k).Mount()
			if sizes, texts := readFiles(t, ctl, ".", []string{"a.txt", "e.txt", "b.txt", "c.txt"}, 16); !slices.Equal(sizes, []int32{4, 0}) || texts[0] != "aaaa" {
				t.Errorf("b.txt after a.txt: sizes %v, texts %q; want a.txt and e.txt only", sizes, texts)
			}
			if sizes, texts := readFiles(t, ctl, ".", []string{"b.txt", "c.txt"}, 16); !slices.Equal(sizes, []int32{-1, 2}) || texts[1] != "cc" {
				t.Errorf("b.txt first: sizes %v, texts %q; want it left to the guest", sizes, texts)
			}
			if sizes, _ := readFiles(t, ctl, "/", []string{"c.txt"}, 16); !slices.Equal(sizes, []int32{2}) {
				t.Errorf("the root as /: sizes %v", sizes)
			}
			ctl.Revoke()
			if sizes, _ := readFiles(t, ctl, ".", []string{"a.txt"}, 16); len(sizes) != 0 {
				t.Errorf("after Revoke: decided %v", sizes)
			}
		})
	}
}
