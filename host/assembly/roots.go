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
)

// AddRoot is the one rule on how many roots a session has: it appends
// root to roots, or refuses it when there is one already (moat serves one
// folder for now). cmd/moat's --root calls it for every value given, on
// the command line, in a variable or in the config file.
func AddRoot(roots []string, root string) ([]string, error) {
	if len(roots) > 0 {
		return roots, fmt.Errorf("a second root (the first was %q): moat serves one folder for now, several roots are not supported yet; give one --root", roots[0])
	}
	return append(roots, root), nil
}

// root is the session's one root: "." when none was given.
func (o *Options) root() (string, error) {
	switch len(o.Roots) {
	case 0:
		return ".", nil
	case 1:
		return o.Roots[0], nil
	}
	_, err := AddRoot(o.Roots[:1], o.Roots[1])
	return "", usagef("--root: %v", err)
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
