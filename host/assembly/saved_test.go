package assembly

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
)

// openSaved runs OpenSaved with the state folder under state.
func openSaved(t *testing.T, state string, roots []string, r Resume) (*Saved, error) {
	t.Helper()
	dirs := make([]confine.Dir, len(roots))
	for i, p := range roots {
		dirs[i] = confine.Dir{Path: p}
	}
	getenv := func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}
	return OpenSaved(getenv, "linux", dirs, r)
}

// A saved chat resumes in the roots it was saved in, by ID or as the
// latest, and is refused in others; the roots' symlinks are resolved
// first, so a link to the same folder is the same root.
func TestOpenSavedResumesInItsRoots(t *testing.T) {
	state, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	sv, err := openSaved(t, state, []string{a, b}, Resume{})
	if err != nil || sv.Off != "" || sv.Prior != nil || sv.Cur == nil || sv.Cur.Root != a+string(os.PathListSeparator)+b {
		t.Fatalf("a new chat: %+v, %v", sv, err)
	}
	if _, err := sv.Store.Save(sv.Cur, []agent.Message{{Role: "user", Content: "hello"}}); err != nil {
		t.Fatal(err)
	}
	id := sv.Cur.ID
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Resume{"resume": {ID: id}, "prefix": {ID: id[:len(id)-2]}, "continue": {Continue: true}} {
		got, err := openSaved(t, state, []string{link, b}, r)
		if err != nil || got.Prior == nil || got.Prior.ID != id || got.Cur != got.Prior {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	_, err = openSaved(t, state, []string{a}, Resume{ID: id})
	if kindOf(err) != Failure || !strings.Contains(err.Error(), "belongs to root "+a+string(os.PathListSeparator)+b+", not "+a) {
		t.Errorf("in another root: %v", err)
	}
	_, err = openSaved(t, state, []string{b}, Resume{Continue: true})
	if kindOf(err) != Failure || !strings.Contains(err.Error(), "no saved session of root "+b) {
		t.Errorf("--continue in a root with none: %v", err)
	}
	_, err = openSaved(t, state, []string{a}, Resume{ID: "nosuchid"})
	if kindOf(err) != Failure || !strings.Contains(err.Error(), "no saved session nosuchid") {
		t.Errorf("an unknown ID: %v", err)
	}
	_, err = openSaved(t, state, []string{a}, Resume{ID: id, Continue: true})
	if kindOf(err) != Usage {
		t.Errorf("--continue with --resume: %v", err)
	}
}

// The chat is not saved when the state folder lies inside a root, or with
// --no-save, or without a state folder (then resuming fails).
func TestOpenSavedOff(t *testing.T) {
	root := t.TempDir()
	sv, err := openSaved(t, filepath.Join(root, "state"), []string{t.TempDir(), root}, Resume{})
	if err != nil || !strings.Contains(sv.Off, "is inside the root") {
		t.Errorf("a state folder inside the second root: %+v, %v", sv, err)
	}
	if _, err := os.Stat(filepath.Join(root, "state")); err == nil {
		t.Errorf("the state folder was made inside the root")
	}
	sv, err = openSaved(t, t.TempDir(), []string{root}, Resume{NoSave: true})
	if err != nil || sv.Off != "--no-save" {
		t.Errorf("--no-save: %+v, %v", sv, err)
	}
	sv, err = openSaved(t, "", []string{root}, Resume{})
	if err != nil || sv.Store != nil || sv.Cur != nil || !strings.Contains(sv.Off, "no state folder") {
		t.Errorf("no state folder: %+v, %v", sv, err)
	}
	if _, err := openSaved(t, "", []string{root}, Resume{Continue: true}); err == nil {
		t.Errorf("--continue without a state folder: no error")
	}
}
