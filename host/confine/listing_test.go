package confine

import (
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
