package recording

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/moatdev/moat/host/policy"
)

// --record-files: the files a session read and the folders it listed, taken
// into the recording, and made again for a replay.

// capture takes a file, or a folder's names, into the recording the first
// time the session touches it: as it was then.
func (r *Recorder) capture(given string, dir bool) {
	if r.over {
		return
	}
	if dir {
		r.captureDir(given)
		return
	}
	if f := r.read(given); f != nil {
		r.keep(*f)
	}
}

// read returns a file as the confined view shows it, nil when it is not
// to be taken: denied, not a regular file, taken already, or known not to
// have existed when the session first touched it.
func (r *Recorder) read(given string) *File {
	rel, ok := r.allowed(given)
	if !ok {
		return nil
	}
	if i, ok := r.files[rel]; ok && (i < 0 || !r.rec.Files[i].Placeholder) {
		return nil
	}
	st, err := fs.Lstat(r.root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		if _, ok := r.files[rel]; !ok {
			r.files[rel] = -1 // a later read sees what the session wrote
		}
		return nil
	}
	if err != nil || !st.Mode().IsRegular() {
		return nil // symbolic links and special files are not recorded
	}
	data, err := fs.ReadFile(r.root, rel)
	if err != nil {
		return nil
	}
	return &File{Path: rel, Data: data, ModTime: st.ModTime(), Mode: st.Mode().Perm()}
}

// allowed cleans a path as the tools do and refuses a denied one.
func (r *Recorder) allowed(given string) (string, bool) {
	rel, err := policy.Clean(given)
	if err != nil {
		return "", false
	}
	if _, denied := r.opt.Policy.Denied(rel); denied && rel != "." {
		return "", false
	}
	return rel, true
}

func (r *Recorder) keep(f File) {
	if !r.grow(len(f.Data)) {
		return
	}
	r.addParents(f.Path)
	if i, ok := r.files[f.Path]; ok && i >= 0 {
		r.rec.Files[i] = f
		return
	}
	r.files[f.Path] = len(r.rec.Files)
	r.rec.Files = append(r.rec.Files, f)
}

func (r *Recorder) captureDir(given string) {
	rel, ok := r.allowed(given)
	if !ok || r.listed[rel] {
		return
	}
	entries, err := fs.ReadDir(r.root, rel)
	if err != nil {
		return
	}
	r.addDir(rel)
	r.listed[rel] = true
	for _, e := range entries {
		p := path.Join(rel, e.Name())
		if _, denied := r.opt.Policy.Denied(p); denied {
			continue // list_dir does not show it; neither does the recording
		}
		if _, seen := r.files[p]; seen {
			continue
		}
		info, err := fs.Lstat(r.root, p) // through the confined view, as list_dir
		if err != nil {
			continue
		}
		switch {
		case info.IsDir():
			r.addDir(p)
		case info.Mode().IsRegular():
			// The name only: a file listed is not a file read.
			if !r.grow(len(p)) {
				return
			}
			r.files[p] = len(r.rec.Files)
			r.rec.Files = append(r.rec.Files, File{Path: p, Placeholder: true, ModTime: info.ModTime(), Mode: info.Mode().Perm()})
		}
	}
}

func (r *Recorder) addParents(rel string) {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		r.addDir(d)
	}
}

func (r *Recorder) addDir(rel string) {
	if rel == "." {
		return
	}
	if _, ok := r.files[rel]; ok {
		return
	}
	st, err := fs.Lstat(r.root, rel)
	if err != nil || !st.IsDir() {
		return
	}
	r.addParents(rel)
	r.files[rel] = len(r.rec.Files)
	r.rec.Files = append(r.rec.Files, File{Path: rel, Dir: true, ModTime: st.ModTime(), Mode: st.Mode().Perm()})
}

// Materialize creates the recorded files under dir (which must not exist
// yet): folders, files with their content and mode, placeholders empty,
// and every modification time as recorded.
func Materialize(dir string, files []File) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range files {
		if d := filepath.Dir(filepath.FromSlash(f.Path)); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if f.Dir {
			if err := root.MkdirAll(filepath.FromSlash(f.Path), 0o755); err != nil {
				return err
			}
			continue
		}
		if err := root.WriteFile(filepath.FromSlash(f.Path), f.Data, f.Mode.Perm()|0o400); err != nil {
			return err
		}
	}
	// Times last, deepest first: creating an entry changes its folder's.
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if err := root.Chtimes(filepath.FromSlash(f.Path), f.ModTime, f.ModTime); err != nil {
			return err
		}
		// Chmod, because the umask may have narrowed the mode (the gate's
		// review shows it).
		mode := f.Mode.Perm() | 0o400
		if f.Dir {
			mode |= 0o700
		}
		if err := root.Chmod(filepath.FromSlash(f.Path), mode); err != nil {
			return err
		}
	}
	return nil
}
