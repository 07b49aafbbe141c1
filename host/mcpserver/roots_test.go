package mcpserver

import (
	"strings"
	"testing"

	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
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

// TestInstructionsNameTheRoots: with several roots the server's
// instructions name them and how a path starts; with one, they speak of
// one folder, as before.
func TestInstructionsNameTheRoots(t *testing.T) {
	cat, _ := toolspec.New()
	pol, _ := policy.New(nil, nil)
	eng, _ := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: &fakeExec{}})
	defer eng.Close()
	several := instructions(eng, []string{"app", "lib"})
	if !strings.Contains(several, "several folders (the workspace's roots: app, lib)") || !strings.Contains(several, "Every path starts with its root's name (app/README.md)") {
		t.Errorf("several roots: %s", several)
	}
	if one := instructions(eng, nil); !strings.HasPrefix(one, "Tools to explore one folder (the workspace) read-only") {
		t.Errorf("one root: %s", one)
	}
}
