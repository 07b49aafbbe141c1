package tools

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/moatdev/moat/guest/proto"
)

// TestListDirDepth: depth 1 is the listing as it always was; from 2 on
// each line is a path under the folder, a folder's entries after it,
// down to depth levels, .gitignored entries and .git left out, links not
// followed, and a tree longer than a page says where the next starts.
func TestListDirDepth(t *testing.T) {
	fsys := fstest.MapFS{
		".gitignore":        file("*.log\nbuild/\n"),
		"a.txt":             file("a"),
		"b.log":             file("b"),
		"build/out":         file("o"),
		"src/main.go":       file("m"),
		"src/lib/x.go":      file("x"),
		"src/lib/deep/y.go": file("y"),
		".git/config":       file("c"),
		"to-src":            link("src"),
	}
	plain := call(t, fsys, proto.ListDir, map[string]any{"path": "."}, proto.Limits{}).Text
	for _, args := range []map[string]any{{"path": ".", "depth": 1}, {"path": ".", "depth": 0}} {
		if got := call(t, fsys, proto.ListDir, args, proto.Limits{}).Text; got != plain {
			t.Errorf("%v: %q, want the plain listing %q", args, got, plain)
		}
	}
	runCases(t, fsys, proto.ListDir, []toolCase{
		{"depth 2", map[string]any{"path": ".", "depth": 2}, proto.Limits{},
			".gitignore\na.txt\nsrc/\nsrc/lib/\nsrc/main.go\nto-src -> src"},
		{"depth 8", map[string]any{"path": ".", "depth": 8}, proto.Limits{},
			".gitignore\na.txt\nsrc/\nsrc/lib/\nsrc/lib/deep/\nsrc/lib/deep/y.go\nsrc/lib/x.go\nsrc/main.go\nto-src -> src"},
		{"a subfolder", map[string]any{"path": "src", "depth": 2}, proto.Limits{},
			"lib/\nlib/deep/\nlib/x.go\nmain.go"},
		{"negative", map[string]any{"path": ".", "depth": -1}, proto.Limits{}, "error: depth must be 1 or more, got -1"},
		{"past the end", map[string]any{"path": "src", "depth": 3, "offset": 9}, proto.Limits{},
			"(no entries from offset 9: the tree has 5 to depth 3)"},
	})
	sized := call(t, fsys, proto.ListDir, map[string]any{"path": "src", "depth": 2, "sizes": true}, proto.Limits{}).Text
	if !strings.Contains(sized, "\nlib/x.go  (1 bytes, ") {
		t.Errorf("sizes in a tree: %q", sized)
	}
	// A tree wider than a page: the first page, then the next from its offset.
	wide := fstest.MapFS{}
	for i := range 1500 {
		wide[fmt.Sprintf("d/f%04d", i)] = file("x")
	}
	got := call(t, wide, proto.ListDir, map[string]any{"path": ".", "depth": 2}, proto.Limits{}).Text
	lines := strings.Split(got, "\n")
	if len(lines) != maxListEntries+2 || lines[0] != "d/" || lines[maxListEntries-1] != "d/f0998" ||
		!strings.HasPrefix(lines[maxListEntries], "... more entries") || !strings.Contains(lines[maxListEntries+1], "offset 1001") {
		t.Fatalf("a wide tree's first page: %d lines: %.300q", len(lines), got)
	}
	got = call(t, wide, proto.ListDir, map[string]any{"path": ".", "depth": 2, "offset": 1001}, proto.Limits{}).Text
	if lines := strings.Split(got, "\n"); len(lines) != 501 || lines[0] != "d/f0999" || lines[500] != "d/f1499" {
		t.Errorf("the next page: %d lines, %q ... %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
