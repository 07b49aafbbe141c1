package assembly

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/moatdev/moat/host/confine"
)

// AddRoot is the one rule on how many roots a session has: it appends
// root to roots, or refuses it past confine.MaxRoots, with a
// *[TooManyRoots]. Every way of giving a root (--root, in a variable or
// in the config file; moat mcp's folder arguments) adds it here, each
// wording the refusal its own way. Whether the roots are distinct and
// disjoint is decided when they are resolved, on the disk
// (Options.Resolve).
func AddRoot(roots []string, root string) ([]string, error) {
	if len(roots) >= confine.MaxRoots {
		return roots, &TooManyRoots{First: roots[0]}
	}
	return append(roots, root), nil
}

// TooManyRoots is a root given beyond confine.MaxRoots.
type TooManyRoots struct {
	First string // the root given first
}

func (e *TooManyRoots) Error() string {
	return fmt.Sprintf("more than %d roots (the first was %q)", confine.MaxRoots, e.First)
}

// dirs are the session's roots, each checked and made absolute (and not a
// home folder unless allowed), with their labels: one root is labelled
// ".", several by their base names made unique (confine.Labels), after
// refusing two that are the same folder or hold one another
// (confine.Disjoint, symbolic links resolved). None given is ".".
func (o *Options) dirs() ([]confine.Dir, error) {
	roots := o.Roots
	if len(roots) == 0 {
		roots = []string{"."}
	}
	if len(roots) > confine.MaxRoots {
		return nil, usagef("--root: %d roots, at most %d", len(roots), confine.MaxRoots)
	}
	var abs, real []string
	for _, root := range roots {
		if err := CheckRoot(root); err != nil {
			return nil, failf("--root: %v", err) // the folder, not the command line
		}
		a, err := filepath.Abs(root)
		if err != nil {
			return nil, usagef("--root: %v", err)
		}
		if !o.AllowHome {
			if err := notHome(a, homes(o.getenv)...); err != nil {
				return nil, err
			}
		}
		r := a
		if e, err := filepath.EvalSymlinks(a); err == nil {
			r = e
		}
		abs, real = append(abs, a), append(real, r)
	}
	if len(abs) == 1 {
		return []confine.Dir{{Label: ".", Path: abs[0]}}, nil
	}
	if err := confine.Disjoint(real); err != nil {
		return nil, usagef("--root: %v", err)
	}
	labels, err := confine.Labels(abs)
	if err != nil {
		return nil, usagef("--root: %v", err)
	}
	out := make([]confine.Dir, len(abs))
	for i := range abs {
		out[i] = confine.Dir{Label: labels[i], Path: abs[i]}
	}
	return out, nil
}

// CheckRoot allows only an existing folder this user can list as a root.
func CheckRoot(root string) error {
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: no such folder", root)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", root)
	}
	// A folder this user cannot list would fail later, deep in the sandbox,
	// with a message that does not say it is the root.
	f, err := os.Open(root)
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("%s: permission denied (moat must be able to read the root)", root)
		}
		return fmt.Errorf("%s: %v", root, Describe(err))
	}
	return nil
}

// homes are the user's home folders: $HOME, and the account's.
func homes(getenv func(string) string) []string {
	h := []string{getenv("HOME")}
	if u, err := user.Current(); err == nil && u.HomeDir != "" && u.HomeDir != h[0] {
		h = append(h, u.HomeDir) // the account's home, whatever $HOME says now
	}
	return h
}

// notHome refuses a root (absolute) that is a home folder or a folder
// above one, "/" always, symbolic links resolved on both: such a root
// holds every project, credential and tool setting of the user, and
// moat's own configuration and state. Options.AllowHome lets it through.
func notHome(abs string, homes ...string) error {
	root := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		root = r
	}
	msg := "--root %s is %s: the model could read every project, credential file and tool setting under it (only the deny-list's names are hidden) and propose writes to any of them; give the project's folder instead, or --allow-home (MOAT_ALLOW_HOME=1, or allow-home in the config file) if you mean it"
	if filepath.Dir(root) == root {
		return usagef(msg, abs, "the file system's root, above your home folder")
	}
	for _, home := range homes {
		if home == "" || !filepath.IsAbs(home) {
			continue
		}
		h := filepath.Clean(home)
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		switch {
		case h == root:
			return usagef(msg, abs, "your home folder")
		case strings.HasPrefix(h, root+string(filepath.Separator)):
			return usagef(msg, abs, "above your home folder ("+h+")")
		}
	}
	return nil
}

// Describe is an error's reason without the path it repeats.
func Describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + " " + pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
