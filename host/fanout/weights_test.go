package fanout

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
)

// TestWeightsFile: what SaveWeights writes (in a folder it makes, 0600)
// LoadWeights reads back; a file that is not there, not JSON, of another
// version or too large reads as none.
func TestWeightsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weights", "name")
	if got := LoadWeights(path); got != nil {
		t.Fatalf("no file read as %v", got)
	}
	ws := []proto.FolderWeight{{Path: ".", Bytes: 300, Entries: 2}, {Path: "a", Bytes: 200, Entries: 7}}
	if err := SaveWeights(path, ws); err != nil {
		t.Fatal(err)
	}
	if got := LoadWeights(path); !slices.Equal(got, ws) {
		t.Fatalf("read back %v, want %v", got, ws)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v, %v", fi.Mode(), err)
	}
	// What is saved is checked first: a path outside the tree is not.
	if err := SaveWeights(path, append(slices.Clone(ws), proto.FolderWeight{Path: "../up", Bytes: 1})); err != nil {
		t.Fatal(err)
	}
	if got := LoadWeights(path); !slices.Equal(got, ws) {
		t.Fatalf("saved with a path outside the tree, read back %v", got)
	}
	for name, content := range map[string]string{
		"not JSON":      "garbage",
		"other version": `{"version":2,"weights":[{"path":".","bytes":1}]}`,
		"too large":     `{"version":1,"weights":[` + strings.Repeat(`{"path":"x","bytes":1},`, maxWeightsFile/20) + `{"path":"y","bytes":1}]}`,
	} {
		os.WriteFile(path, []byte(content), 0o600)
		if got := LoadWeights(path); got != nil {
			t.Errorf("%s: read as %d folders", name, len(got))
		}
	}
}
