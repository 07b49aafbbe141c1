package recording

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
)

// --record-files: every file a session's calls opened, every folder they
// listed and every path they described, taken into the recording, and
// made again for a replay.

// captureTouch takes what one call touched (as its guest's mount observed
// it, confine.Touch) into the recording, the first time the session
// touches it: as it was then. Every path is checked again here, against
// the deny-list and through the confined view: the touches of an isolated
// child are that child's word.
func (r *Recorder) captureTouch(t confine.Touch) {
	if r.over {
		return
	}
	rel, ok := r.resolve(t.Path)
	if !ok {
		return
	}
	if t.Kind&confine.Listed != 0 {
		r.captureDir(rel)
	}
	if t.Kind&confine.Opened != 0 {
		if f := r.read(rel); f != nil {
			r.keep(*f)
		}
	}
	if t.Kind&confine.Described != 0 {
		r.describe(rel)
	}
}

// describe takes a path a call described (stat): a folder, or a file as
// a placeholder of its size (its content is not taken: it was not
// opened).
func (r *Recorder) describe(rel string) {
	if rel == "." {
		return
	}
	i, seen := r.files[rel]
	if seen && (i < 0 || !r.rec.Files[i].Placeholder || r.rec.Files[i].Size > 0) {
		return
	}
	info, err := fs.Lstat(r.root, rel)
	if err != nil {
		return
	}
	if seen {
		// A name a listing took: now its size shows.
		if info.Mode().IsRegular() {
			r.rec.Files[i].Size = info.Size()
		}
		return
	}
	switch {
	case info.IsDir():
		r.addDir(rel)
	case info.Mode().IsRegular():
		if !r.grow(len(rel), rootDir+rel) {
			return
		}
		r.addParents(rel)
		r.files[rel] = len(r.rec.Files)
		r.rec.Files = append(r.rec.Files, File{Path: rel, Placeholder: true, Size: info.Size(), ModTime: info.ModTime(), Mode: info.Mode().Perm()})
	default:
		r.keepSpecial(rel, info)
	}
}

// keepSpecial records a named pipe or a socket a call listed or
// described (never opened: the confined view refuses to), so that the
// replay shows the same kind; a device is not recorded.
func (r *Recorder) keepSpecial(rel string, info fs.FileInfo) {
	kind := specialKind(info.Mode())
	if kind == "" {
		return
	}
	if _, seen := r.files[rel]; seen || !r.grow(len(rel), rootDir+rel) {
		return
	}
	r.addParents(rel)
	r.files[rel] = len(r.rec.Files)
	r.rec.Files = append(r.rec.Files, File{Path: rel, Special: kind, ModTime: info.ModTime(), Mode: info.Mode().Perm()})
}

func specialKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return SpecialPipe
	case m&fs.ModeSocket != 0:
		return SpecialSocket
	}
	return ""
}

// resolve takes a path the tools read through links inside the root to
// the path with no link in it, recording each link on the way, so that
// the replay makes the same links. It fails for a path that is denied, or
// one through a link the confined view does not read (out of the root, to
// a denied name): then only that link is taken, as refused.
func (r *Recorder) resolve(given string) (string, bool) {
	rel, ok := r.allowed(given)
	if !ok {
		return "", false
	}
	for range 40 { // as the kernel's limit on links in a path
		parts := strings.Split(rel, "/")
		linked := false
		for i := range parts {
			pre := strings.Join(parts[:i+1], "/")
			st, err := fs.Lstat(r.root, pre)
			if err != nil {
				return rel, true // not there (yet): read decides
			}
			if st.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			target, err := fs.ReadLink(r.root, pre)
			if err != nil || !linkInside(pre, target) {
				r.keepRefused(pre, st, err) // described (stat), or on the way
				return "", false
			}
			if _, seen := r.files[pre]; !seen && r.grow(len(pre)+len(target), rootDir+pre) {
				r.addParents(pre)
				r.files[pre] = len(r.rec.Files)
				r.rec.Files = append(r.rec.Files, File{Path: pre, Link: target, ModTime: st.ModTime(), Mode: st.Mode().Perm()})
			}
			rel, ok = r.allowed(path.Join(path.Dir(pre), target, strings.Join(parts[i+1:], "/")))
			if !ok {
				return "", false
			}
			linked = true
			break
		}
		if !linked {
			return rel, true
		}
	}
	return "", false
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

// allowed cleans a path as the tools do and refuses a denied one: with
// several roots, judged relative to its root (a root's label is never
// judged), as the confined view judges it.
func (r *Recorder) allowed(given string) (string, bool) {
	rel, err := policy.Clean(given)
	if err != nil {
		return "", false
	}
	judged := rel
	if len(r.opt.Roots) > 1 {
		label, rest, _ := strings.Cut(rel, "/")
		for _, d := range r.opt.Roots {
			if d.Label == label {
				judged = cmp.Or(rest, ".")
			}
		}
	}
	if _, denied := r.opt.Policy.Denied(judged); denied && judged != "." {
		return "", false
	}
	return rel, true
}

func (r *Recorder) keep(f File) {
	if !r.grow(len(f.Data), rootDir+f.Path) {
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

// captureDir takes the names in folder rel (a path with no link in it).
func (r *Recorder) captureDir(rel string) {
	if r.listed[rel] {
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
		case info.Mode()&fs.ModeSymlink != 0:
			// As list_dir shows it: a target the confined view reads; a
			// link it refuses (out of the root, to a denied name) is left
			// out.
			target, err := fs.ReadLink(r.root, p)
			if err != nil || !linkInside(p, target) {
				r.keepRefused(p, info, err)
				continue
			}
			if !r.grow(len(p)+len(target), rootDir+p) {
				continue
			}
			r.files[p] = len(r.rec.Files)
			r.rec.Files = append(r.rec.Files, File{Path: p, Link: target, ModTime: info.ModTime(), Mode: info.Mode().Perm()})
		case info.IsDir():
			r.addDir(p)
		case info.Mode().IsRegular():
			// The name only: a file listed is not a file read.
			if !r.grow(len(p), rootDir+p) {
				return
			}
			r.files[p] = len(r.rec.Files)
			r.rec.Files = append(r.rec.Files, File{Path: p, Placeholder: true, ModTime: info.ModTime(), Mode: info.Mode().Perm()})
		default:
			r.keepSpecial(p, info)
		}
	}
}

// keepRefused records the link at p (info its lstat) that the confined
// view refused to read (err, or a target that leads out lexically): as a
// link that a replay's view refuses for the same reason, its target's
// length kept, its target not. A link refused for another reason (a
// loop) is not recorded.
func (r *Recorder) keepRefused(p string, info fs.FileInfo, err error) {
	why := ""
	switch {
	case err == nil, errors.Is(err, confine.ErrEscape):
		why = RefusedOutside
	case errors.Is(err, confine.ErrDenied):
		why = RefusedDenied
	default:
		return
	}
	if _, seen := r.files[p]; seen || !r.grow(len(p), rootDir+p) {
		return
	}
	r.addParents(p)
	r.files[p] = len(r.rec.Files)
	r.rec.Files = append(r.rec.Files, File{Path: p, Refused: why, Size: min(info.Size(), 4096), ModTime: info.ModTime(), Mode: info.Mode().Perm()})
}

// refusedTarget is a target of n bytes that the confined view refuses
// for the reason why: an absolute path (out of the root, never followed),
// or one through .git (the deny-list's, built in).
func refusedTarget(why string, n int64) string {
	if why == RefusedDenied {
		if n < 5 {
			return ".git"
		}
		return ".git/" + strings.Repeat("x", int(n)-5)
	}
	return "/" + strings.Repeat("x", max(int(n), 1)-1)
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
	var links []File
	for _, f := range files {
		if d := filepath.Dir(filepath.FromSlash(f.Path)); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if f.Link != "" || f.Refused != "" {
			links = append(links, f) // last: nothing is written through one
			continue
		}
		if f.Special != "" {
			if err := makeSpecial(dir, f.Path, f.Special, f.Mode.Perm()|0o400); err != nil {
				return err
			}
			continue
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
		if f.Placeholder && f.Size > 0 {
			if err := truncate(root, f.Path, f.Size); err != nil {
				return err
			}
		}
	}
	for _, f := range links {
		if f.Refused != "" {
			if err := root.Symlink(refusedTarget(f.Refused, f.Size), filepath.FromSlash(f.Path)); err != nil {
				return err
			}
			continue
		}
		if !linkInside(f.Path, f.Link) {
			return fmt.Errorf("the link %s points out of the root", f.Path)
		}
		if err := root.Symlink(f.Link, filepath.FromSlash(f.Path)); err != nil {
			return err
		}
	}
	// Times last, deepest first: creating an entry changes its folder's.
	// A link's own time cannot be set through an os.Root (Chtimes follows
	// it); it is set by its path in the folder just made, where the
	// system can (linkTime).
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if f.Link != "" || f.Refused != "" {
			if err := linkTime(dir, f.Path, f.ModTime); err != nil {
				return err
			}
			continue
		}
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

// truncate makes the file at rel (just written empty) size bytes long:
// zeros, a sparse file where the filesystem has them.
func truncate(root *os.Root, rel string, size int64) error {
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
