package assembly

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/session"
)

// RootsKey names a session's roots where one name is wanted (a saved chat
// session's root, chat's first line): the one root's path, or the paths
// of several joined by the list separator, as in $PATH.
func RootsKey(dirs []confine.Dir) string {
	paths := make([]string, len(dirs))
	for i, d := range dirs {
		paths[i] = d.Path
	}
	return strings.Join(paths, string(os.PathListSeparator))
}

// Resume is which saved chat a chat goes on with (moat chat --continue,
// --resume, --no-save).
type Resume struct {
	Continue bool   // the latest saved session of the roots
	ID       string // the session of this ID, or of the one ID that starts so
	NoSave   bool   // keep this chat off the disk
}

// Saved is where a chat is saved, as [OpenSaved] decided it.
type Saved struct {
	// Store is the state folder's sessions, nil when there is no state
	// folder (Off says why).
	Store *session.Store
	// Cur is the session the chat saves into: Prior when resuming, else a
	// new one; nil without a Store.
	Cur *session.Saved
	// Prior is the session resumed, nil for a new conversation.
	Prior *session.Saved
	// Off is why nothing is saved ("--no-save", a state folder inside a
	// root), "" while saving.
	Off string
}

// OpenSaved finds the saved session a chat goes on with in the state
// folder (session.Dir of getenv and goos), and decides whether the chat
// is saved. A session resumes only in the roots it was saved in (their
// paths absolute, symlinks resolved here, joined as [RootsKey] joins
// them), and the chat is not saved when the state folder lies inside a
// root, where the model could read it. Refusals are Failures, except
// --continue with --resume, a Usage error.
func OpenSaved(getenv func(string) string, goos string, roots []confine.Dir, r Resume) (*Saved, error) {
	if r.Continue && r.ID != "" {
		return nil, usagef("--continue and --resume both name a session; give one")
	}
	roots = slices.Clone(roots)
	for i, d := range roots {
		if canon, err := filepath.EvalSymlinks(d.Path); err == nil {
			roots[i].Path = canon
		}
	}
	dir, err := session.Dir(getenv, goos)
	if err != nil {
		if r.Continue || r.ID != "" {
			return nil, err
		}
		return &Saved{Off: err.Error()}, nil
	}
	sv := &Saved{Store: session.NewStore(dir, nil)}
	switch {
	case r.NoSave:
		sv.Off = "--no-save"
	case slices.ContainsFunc(roots, func(d confine.Dir) bool { return Inside(sv.Store.Path(), d.Path) }):
		sv.Off = fmt.Sprintf("the state folder %s is inside the root, where the model could read it; set XDG_STATE_HOME to a folder outside", sv.Store.Path())
	}
	root := RootsKey(roots)
	id, err := sv.resumeID(r, root)
	if err != nil {
		return nil, err
	}
	if id == "" {
		sv.Cur = sv.Store.New(root, "")
		return sv, nil
	}
	if sv.Prior, err = sv.load(id, root); err != nil {
		return nil, err
	}
	sv.Cur = sv.Prior
	return sv, nil
}

// resumeID is the full ID of the session r names, "" for none.
func (sv *Saved) resumeID(r Resume, root string) (string, error) {
	st := sv.Store
	if r.ID != "" {
		full, err := st.Resolve(r.ID)
		switch {
		case errors.Is(err, session.ErrNotFound):
			return "", failf("--resume: no saved session %s; 'moat sessions' lists them", agent.Sanitize(r.ID, false))
		case err != nil:
			return "", failf("--resume: %s", agent.Sanitize(err.Error(), false))
		}
		return full, nil
	}
	if !r.Continue {
		return "", nil
	}
	h, err := st.Last(root)
	if errors.Is(err, session.ErrNotFound) {
		return "", failf("no saved session of root %s to continue; 'moat sessions' lists them", agent.Sanitize(root, false))
	}
	if err != nil {
		return "", err
	}
	return h.ID, nil
}

// load reads the session id, which must be of root.
func (sv *Saved) load(id, root string) (*session.Saved, error) {
	st := sv.Store
	prior, err := st.Load(id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return nil, failf("--resume: no saved session %s; 'moat sessions' lists them", agent.Sanitize(id, false))
	case errors.Is(err, session.ErrCorrupt):
		return nil, failf("session %s cannot be resumed: %s; delete %s, or start a new chat", id, agent.Sanitize(err.Error(), false), agent.Sanitize(filepath.Join(st.Path(), id+".jsonl"), false))
	case err != nil:
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	case prior.Root != root:
		return nil, failf("session %s belongs to root %s, not %s; run moat chat --root %s --resume %s",
			id, agent.Sanitize(prior.Root, false), agent.Sanitize(root, false), agent.Sanitize(prior.Root, false), id)
	}
	return prior, nil
}
