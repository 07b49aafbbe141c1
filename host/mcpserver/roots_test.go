package mcpserver

import (
	"strings"
	"testing"
)

// TestListAllowedDirectories: another server's list_allowed_directories
// is told that list_dir "." lists the roots, naming them, when there are
// several; with one, that the server serves one folder.
func TestListAllowedDirectories(t *testing.T) {
	several := (&Server{labels: []string{"src", "src-2"}}).refusedWhy("list_allowed_directories")
	if !strings.Contains(several, `list_dir with path "." lists this server's roots, one folder each (src, src-2)`) {
		t.Errorf("several roots: %s", several)
	}
	if one := (&Server{}).refusedWhy("list_allowed_directories"); !strings.Contains(one, "serves one folder") {
		t.Errorf("one root: %s", one)
	}
}
