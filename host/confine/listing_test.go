package confine

import (
	"fmt"
	"io/fs"
	"testing"
	"testing/fstest"
)

// TestListingTake: a listed regular file is taken once, by its canonical
// path, in the root and below; what was not listed as a regular file never.
func TestListingTake(t *testing.T) {
	fsys := fstest.MapFS{"a.txt": {}, "sub/b.txt": {}, "sub/c": {Mode: fs.ModeNamedPipe}, "sub/d/e.txt": {}}
	var l listing
	for _, dir := range []string{".", "sub"} {
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			t.Fatal(err)
		}
		l.add(dir, ents)
	}
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"a.txt", true}, {"a.txt", false}, {"sub/b.txt", true}, {"sub/b.txt", false},
		{"sub/c", false}, {"sub", false}, {"sub/d/e.txt", false}, {"b.txt", false}, {"./a.txt", false},
	} {
		if got := l.take(c.rel); got != c.want {
			t.Errorf("take(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
	if len(l.dirs) != 0 || l.held != 0 {
		t.Errorf("after every listed file was taken: %d folders, %d names held", len(l.dirs), l.held)
	}
}

// TestListingKeepsTheFolderBeingListed: past maxListed names the other
// folders are forgotten, but the folder being listed is kept whole.
func TestListingKeepsTheFolderBeingListed(t *testing.T) {
	var l listing
	l.add("other", []fs.DirEntry{regular("o.txt")})
	wide := make([]fs.DirEntry, maxListed+1000)
	for i := range wide {
		wide[i] = regular(fmt.Sprintf("e%06d", i))
	}
	for i := 0; i < len(wide); i += 2048 { // in batches, as wazero reads a folder
		l.add("wide", wide[i:min(i+2048, len(wide))])
	}
	if l.take("other/o.txt") {
		t.Error("another folder's name was kept past the bound")
	}
	for i := range wide {
		if !l.take("wide/" + wide[i].Name()) {
			t.Fatalf("wide/%s, listed, was forgotten", wide[i].Name())
		}
	}
	if len(l.dirs) != 0 || l.held != 0 {
		t.Errorf("after every listed file was taken: %d folders, %d names held", len(l.dirs), l.held)
	}
}

// regular is a listed regular file.
func regular(name string) fs.DirEntry { return regularEntry(name) }

type regularEntry string

func (e regularEntry) Name() string               { return string(e) }
func (e regularEntry) IsDir() bool                { return false }
func (e regularEntry) Type() fs.FileMode          { return 0 }
func (e regularEntry) Info() (fs.FileInfo, error) { return nil, fs.ErrInvalid }

// TestListingAfterIndex: names listed once the folder is indexed (a guest
// that opens a file halfway through listing its folder, or lists it
// again) are taken as those listed before, a name listed twice is taken
// once, and a name listed again after it was taken may be taken again.
func TestListingAfterIndex(t *testing.T) {
	var l listing
	l.add("d", []fs.DirEntry{regular("a"), regular("a"), regular("b")})
	if !l.take("d/a") || l.take("d/a") {
		t.Fatal("a name listed twice before the index was not taken exactly once")
	}
	more := make([]fs.DirEntry, 1000) // enough to regrow the table several times
	for i := range more {
		more[i] = regular(fmt.Sprintf("n%d", i))
	}
	l.add("d", more)
	l.add("d", []fs.DirEntry{regular("a"), regular("b")})
	for _, e := range append(more, regular("a"), regular("b")) {
		if !l.take("d/" + e.Name()) {
			t.Fatalf("d/%s, listed after the index, was not taken", e.Name())
		}
	}
	if l.take("d/a") || l.take("d/n5") {
		t.Error("a name was taken twice")
	}
	if len(l.dirs) != 0 || l.held != 0 {
		t.Errorf("after every listed file was taken: %d folders, %d names held", len(l.dirs), l.held)
	}
}

// TestListingOff: with remembering off, a listing is not kept and nothing
// is taken; turning it off forgets what was kept; on again, it keeps.
func TestListingOff(t *testing.T) {
	var l listing
	l.add("d", []fs.DirEntry{regular("a"), regular("b")})
	l.enable(false)
	if l.take("d/a") || len(l.dirs) != 0 || l.held != 0 {
		t.Fatalf("turned off, still holds %d folders, %d names", len(l.dirs), l.held)
	}
	l.add("d", []fs.DirEntry{regular("c")})
	if l.take("d/c") {
		t.Fatal("a listing made while off was kept")
	}
	l.enable(true)
	l.add("d", []fs.DirEntry{regular("c")})
	if !l.take("d/c") {
		t.Fatal("on again, a listing was not kept")
	}
}
