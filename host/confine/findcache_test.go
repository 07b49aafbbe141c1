//go:build unix

package confine

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
)

// The findings cache's tests. Each "process" is an FS of its own over
// the same root, as a later moat would open it. Files written by a test
// are not settled (findings.put) by the wall clock for RacyMargin, so a
// process here reads its clock an hour ahead ("later"): its files are
// settled, and it remembers them; the racy rule itself has its own test
// (racy_test.go).

// cacheToken is a secret the redactor finds; cachePlain is as long.
var (
	cacheToken = strings.Join([]string{"ghp_", "R8fQ2mZx7LwK1pVt9sNb3cYh5JdUe6Ga4Xo0"}, "")
	cachePlain = strings.Repeat("x", len(cacheToken))
)

// later is a clock an hour ahead of the wall clock.
func later() time.Time { return time.Now().Add(time.Hour) }

// process is a new FS over root, as a new process opens it, that has
// recalled the findings cache at cache (if it could be trusted).
func process(t *testing.T, root, cache string) *FS {
	t.Helper()
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(root, Auto, pol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	f.SetRedactor(redact.New())
	f.seen.now = later
	if fd, err := LoadCache(cache); err == nil {
		f.Recall(fd)
	}
	return f
}

// read is the view of name through f.
func read(t *testing.T, f *FS, name string) string {
	t.Helper()
	b, err := fs.ReadFile(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cachePath is a cache file's path in a fresh folder.
func cachePath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "findings", CacheName([32]byte{1}, "build", []Dir{{Label: ".", Path: "/r"}}))
}

// names are the files fd holds findings of.
func names(fd Findings) []string {
	var out []string
	for _, e := range fd.entries {
		out = append(out, e.key.name)
	}
	return out
}

func write(t *testing.T, path, text string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(text), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCacheRoundTrip: what one process found is saved (0600, in a 0700
// folder) and a later one recalls it: it serves the same views and finds
// in none of the files again, a secret's marks included; a file the
// first did not read is found in by the second.
func TestCacheRoundTrip(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "plain.txt"), "v: "+cachePlain+"\n")
	write(t, filepath.Join(root, "secret.txt"), "v: "+cacheToken+"\n")
	write(t, filepath.Join(root, "other.txt"), "v: "+cacheToken+"\n")
	cache := cachePath(t)
	first := process(t, root, cache)
	for _, name := range []string{"plain.txt", "secret.txt"} {
		read(t, first, name)
	}
	fresh := first.Fresh()
	if got := strings.Join(names(fresh), " "); got != "plain.txt secret.txt" && got != "secret.txt plain.txt" {
		t.Fatalf("fresh findings of %q", got)
	}
	if first.Fresh().Len() != 0 {
		t.Fatal("the fresh findings were given twice")
	}
	if err := SaveCache(cache, fresh); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{cache: 0o600, filepath.Dir(cache): 0o700 | fs.ModeDir} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode(), err, want)
		}
	}
	second := process(t, root, cache)
	for name, want := range map[string]string{
		"plain.txt":  "v: " + cachePlain + "\n",
		"secret.txt": "v: [redacted: github-pat]\n",
		"other.txt":  "v: [redacted: github-pat]\n",
	} {
		if got := read(t, second, name); got != want {
			t.Errorf("%s in the second process: %q, want %q", name, got, want)
		}
	}
	if got := names(second.Fresh()); len(got) != 1 || got[0] != "other.txt" {
		t.Errorf("the second process found in %q, want only other.txt", got)
	}
}

// TestCacheSecretWrittenLater is the attack the cache must not let
// through: a file remembered as holding no secret is given one of the
// same size after the cache was saved (in place, or a new file renamed
// over it), its modification time put back, and the next process is to
// serve it redacted. Its change time, or its inode, differs, and the
// cache holds nothing for that.
func TestCacheSecretWrittenLater(t *testing.T) {
	for _, how := range []string{"in place", "renamed over"} {
		t.Run(how, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "notes.txt")
			write(t, p, "v: "+cachePlain+"\n")
			old, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			cache := cachePath(t)
			first := process(t, root, cache)
			if got := read(t, first, "notes.txt"); got != "v: "+cachePlain+"\n" {
				t.Fatalf("first: %q", got)
			}
			if err := SaveCache(cache, first.Fresh()); err != nil {
				t.Fatal(err)
			}
			if fd, err := LoadCache(cache); err != nil || fd.Len() != 1 {
				t.Fatalf("the cache holds %v (%v), want the file", fd.Len(), err)
			}
			switch how {
			case "in place":
				fh, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := fh.WriteAt([]byte(cacheToken), 3); err != nil {
					t.Fatal(err)
				}
				fh.Close()
			case "renamed over":
				write(t, p+".new", "v: "+cacheToken+"\n")
				if err := os.Rename(p+".new", p); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chtimes(p, old.ModTime(), old.ModTime()); err != nil {
				t.Fatal(err)
			}
			if got := read(t, process(t, root, cache), "notes.txt"); got != "v: [redacted: github-pat]\n" {
				t.Errorf("the next process served %q", got)
			}
		})
	}
}

// TestCacheKeyedByIdentity: an entry applies only to the file of its
// every field: a file that differs from it in its device, inode, size,
// modification or change time, or in the name it is opened by (which
// decides its shape), is found in again, and its secret redacted. The
// identities are stamped (stampedInfo), as no test can set a change time.
func TestCacheKeyedByIdentity(t *testing.T) {
	dir := t.TempDir()
	plain := "v: " + cachePlain + "\n"
	write(t, filepath.Join(dir, "plain"), plain)
	write(t, filepath.Join(dir, "secret"), "v: "+cacheToken+"\n")
	write(t, filepath.Join(dir, "longer"), "v: "+cacheToken+"\n\n")
	stamp := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC).UnixNano()
	type id struct {
		dev, ino     uint64
		mtime, ctime int64
		name         string
	}
	base := id{7, 42, stamp, stamp, "a.txt"}
	serve := func(f *FS, file string, k id) string {
		return serveStamped(t, f, filepath.Join(dir, file), k.name, k.dev, k.ino, k.mtime, k.ctime)
	}
	newFS := func() *FS {
		f := &FS{}
		f.SetRedactor(redact.New())
		f.seen.now = later
		return f
	}
	cache := cachePath(t)
	first := newFS()
	if got := serve(first, "plain", base); got != plain {
		t.Fatalf("first: %q", got)
	}
	if err := SaveCache(cache, first.Fresh()); err != nil {
		t.Fatal(err)
	}
	fd, err := LoadCache(cache)
	if err != nil {
		t.Fatal(err)
	}
	// The control: the same identity is served by the cache (the secret
	// content it does not know of is not looked at).
	f := newFS()
	f.Recall(fd)
	if got := serve(f, "secret", base); got != "v: "+cacheToken+"\n" {
		t.Fatalf("the cache did not serve its own file's identity: %q", got)
	}
	for name, k := range map[string]id{
		"device":            {8, base.ino, base.mtime, base.ctime, base.name},
		"inode":             {base.dev, 43, base.mtime, base.ctime, base.name},
		"modification time": {base.dev, base.ino, base.mtime + 1, base.ctime, base.name},
		"change time":       {base.dev, base.ino, base.mtime, base.ctime + 1, base.name},
		"name":              {base.dev, base.ino, base.mtime, base.ctime, "b.txt"},
	} {
		f := newFS()
		f.Recall(fd)
		if got := serve(f, "secret", k); got != "v: [redacted: github-pat]\n" {
			t.Errorf("another %s: served %q", name, got)
		}
	}
	f = newFS()
	f.Recall(fd)
	if got := serve(f, "longer", base); got != "v: [redacted: github-pat]\n\n" {
		t.Errorf("another size: served %q", got)
	}
}

// TestCacheName: the name, and so the file, changes with the rules, the
// build and the roots; a cache file under another's name (its key) is
// not read.
func TestCacheName(t *testing.T) {
	dirs := []Dir{{Label: ".", Path: "/r"}}
	base := CacheName([32]byte{1}, "build", dirs)
	for what, name := range map[string]string{
		"rules": CacheName([32]byte{2}, "build", dirs),
		"build": CacheName([32]byte{1}, "build2", dirs),
		"root":  CacheName([32]byte{1}, "build", []Dir{{Label: ".", Path: "/s"}}),
		"roots": CacheName([32]byte{1}, "build", []Dir{{Label: "r", Path: "/r"}, {Label: "s", Path: "/s"}}),
	} {
		if name == base {
			t.Errorf("another %s, the same name", what)
		}
	}
	if CacheName([32]byte{1}, "", dirs) != "" {
		t.Error("a name without a build")
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "plain\n")
	f := process(t, root, "")
	read(t, f, "a.txt")
	dir := t.TempDir()
	if err := SaveCache(filepath.Join(dir, base), f.Fresh()); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, CacheName([32]byte{2}, "build", dirs))
	if err := os.Rename(filepath.Join(dir, base), other); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCache(other); !errors.Is(err, errCache) {
		t.Errorf("a cache under another key's name was read (%v)", err)
	}
}

// TestCacheNotTrusted: a cache file that is damaged, cut short, of
// another version, not this user's, writable by others or reached
// through a symbolic link is not read, its forged "no secret here" not
// served; the next save replaces it with one of its own entries alone.
func TestCacheNotTrusted(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "notes.txt")
	write(t, p, "v: "+cachePlain+"\n")
	cache := cachePath(t)
	// A forgery: the cache of the file while it was plain, made by this
	// test, then the file given a secret (with its old identity stamped
	// back into the entry, as a forger would write it).
	first := process(t, root, "")
	read(t, first, "notes.txt")
	forged := first.Fresh()
	write(t, p, "v: "+cacheToken+"\n")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := keyOf(fi, "notes.txt")
	forged.entries[0].key = k
	if err := SaveCache(cache, forged); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	// The control: trusted, the forgery would be served.
	if got := read(t, process(t, root, cache), "notes.txt"); got != "v: "+cacheToken+"\n" {
		t.Fatalf("the control: the forged entry was not served (%q)", got)
	}
	resum := func(b []byte) []byte {
		body := b[:len(b)-32]
		out := append([]byte(nil), body...)
		s := sha256.Sum256(body)
		return append(out, s[:]...)
	}
	for name, spoil := range map[string]func(t *testing.T){
		"damaged": func(t *testing.T) {
			b := bytes.Clone(good)
			b[len(b)-40] ^= 1
			write(t, cache, string(b))
		},
		"cut short": func(t *testing.T) { write(t, cache, string(good[:len(good)-1])) },
		"another version": func(t *testing.T) {
			b := bytes.Clone(good)
			b[len(cacheMagic)]++
			write(t, cache, string(resum(b)))
		},
		"empty": func(t *testing.T) { write(t, cache, "") },
		"writable by the group": func(t *testing.T) {
			write(t, cache, string(good))
			must(t, os.Chmod(cache, 0o620))
		},
		"writable by all": func(t *testing.T) {
			write(t, cache, string(good))
			must(t, os.Chmod(cache, 0o606))
		},
		"another user's": func(t *testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file away")
			}
			write(t, cache, string(good))
			must(t, os.Chown(cache, 12345, 12345))
		},
		"a symbolic link": func(t *testing.T) {
			real := filepath.Join(t.TempDir(), filepath.Base(cache))
			write(t, real, string(good))
			must(t, os.Chmod(real, 0o600))
			must(t, os.Symlink(real, cache))
		},
		"a folder": func(t *testing.T) { must(t, os.Mkdir(cache, 0o700)) },
	} {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(cache)
			spoil(t)
			if fd, err := LoadCache(cache); err == nil {
				t.Fatalf("read, %d entries", fd.Len())
			}
			next := process(t, root, cache)
			if got := read(t, next, "notes.txt"); got != "v: [redacted: github-pat]\n" {
				t.Fatalf("served %q", got)
			}
			if name == "a folder" {
				return // not replaced: a rename does not go over a folder
			}
			if err := SaveCache(cache, next.Fresh()); err != nil {
				t.Fatal(err)
			}
			fd, err := LoadCache(cache)
			if err != nil {
				t.Fatalf("the replacement is not read: %v", err)
			}
			if len(fd.entries) != 1 || len(fd.entries[0].found) != 1 {
				t.Errorf("the replacement holds %+v, want the file with its secret alone", fd.entries)
			}
			fi, err := os.Lstat(cache)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
				t.Errorf("the replacement is %v (%v)", fi.Mode(), err)
			}
		})
	}
	// A folder not this user's own, or writable by others, is not saved in.
	dir := filepath.Dir(cache)
	os.RemoveAll(cache)
	must(t, os.Chmod(dir, 0o777))
	if err := SaveCache(cache, forged); err == nil {
		t.Error("saved in a folder anyone can write")
	}
}

// TestCacheDecodeChecks: the entries read back are checked: findings out
// of the file, out of order, overlapping or empty, too many, a root past
// MaxRoots, or bytes left over fail the whole.
func TestCacheDecodeChecks(t *testing.T) {
	k := fileKey{dev: 1, ino: 2, size: 100, mtime: 3, ctime: 4, name: "a.txt"}
	ok := []entry{{key: k, found: []redact.Finding{{Rule: "r", Start: 1, End: 5}, {Rule: "r", Start: 5, End: 100}}}}
	b, _ := Findings{entries: ok}.MarshalBinary()
	if _, err := decodeEntries(b); err != nil {
		t.Fatalf("the control: %v", err)
	}
	many := make([]redact.Finding, maxRememberedFindings+1)
	for i := range many {
		many[i] = redact.Finding{Rule: "r", Start: i, End: i + 1}
	}
	for name, e := range map[string]entry{
		"past the end": {key: k, found: []redact.Finding{{Rule: "r", Start: 90, End: 101}}},
		"out of order": {key: k, found: []redact.Finding{{Rule: "r", Start: 10, End: 20}, {Rule: "r", Start: 1, End: 5}}},
		"overlapping":  {key: k, found: []redact.Finding{{Rule: "r", Start: 1, End: 20}, {Rule: "r", Start: 10, End: 30}}},
		"empty":        {key: k, found: []redact.Finding{{Rule: "r", Start: 10, End: 10}}},
		"no rule":      {key: k, found: []redact.Finding{{Rule: "", Start: 10, End: 11}}},
		"too many":     {key: fileKey{size: 1 << 20, name: "big"}, found: many},
		"root":         {root: MaxRoots, key: k},
	} {
		b, _ := Findings{entries: []entry{e}}.MarshalBinary()
		if _, err := decodeEntries(b); err == nil {
			t.Errorf("%s: read", name)
		}
	}
	if _, err := decodeEntries(append(bytes.Clone(b), 0)); err == nil {
		t.Error("bytes left over: read")
	}
	if _, err := decodeEntries(b[:len(b)-1]); err == nil {
		t.Error("cut short: read")
	}
}

// TestCacheBounded: at most maxCached entries are kept, each file's
// latest, the oldest left out.
func TestCacheBounded(t *testing.T) {
	var fd Findings
	n := maxCached + 10
	for i := range n {
		fd.entries = append(fd.entries, entry{key: fileKey{ino: uint64(i), name: "f"}})
	}
	fd.entries = append(fd.entries, entry{key: fileKey{ino: uint64(n - 1), name: "f"}, found: []redact.Finding{{Rule: "r", Start: 0, End: 1}}})
	kept := compact(fd.entries)
	if len(kept) != maxCached {
		t.Fatalf("%d kept", len(kept))
	}
	if kept[0].key.ino != 10 || kept[len(kept)-1].key.ino != uint64(n-1) || len(kept[len(kept)-1].found) != 1 {
		t.Errorf("kept %d..%d (%d findings), want the newest, the latest of each", kept[0].key.ino, kept[len(kept)-1].key.ino, len(kept[len(kept)-1].found))
	}
}
