package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/moatdev/moat/host/policy"
)

// Several roots
//
// A sandbox of several folders (moat --root a --root b) is one FS whose
// top folder is made up: its entries are the roots' labels, and each
// delegates to that root's own FS, with its own resolver (its own
// os.Root or openat2 descriptor), its own redacted view and the policy
// judged relative to it. The guest still has one preopen, and names a
// file label/path. Because each root resolves its paths in its own
// resolver, a link or a ".." that leads from one root into another is
// refused by the same code that refuses any escape from a root: the
// other root is outside it. The top folder holds nothing else, is listed
// only by its labels (the deny-list does not judge them: they are the
// user's own folders, chosen by name on the command line), and can be
// neither written, nor linked, nor renamed: the mount refuses every write
// (EROFS), and the top is no folder of any disk.
//
// With one root there is no top folder: the FS is that root's, and names
// are exactly as they always were.

// MaxRoots bounds the folders of one sandbox: each is a bind mount of the
// isolated child (whose root tmpfs has room for a few dozen) and a line
// of every listing of the top.
const MaxRoots = 16

// Dir is one root of a sandbox: the label its files are named under
// (the first component of their names, with several roots) and its
// absolute path.
type Dir struct {
	Label string `json:"label"`
	Path  string `json:"path"`
}

// Labels gives each of paths (the roots, in the order given) its label:
// its base name, made unique by a suffix ("src", "src-2") where two have
// the same one. A label is a single path element: a base name that is
// not (the file system's root, "..") is refused.
func Labels(paths []string) ([]string, error) {
	seen := map[string]bool{}
	out := make([]string, len(paths))
	for i, p := range paths {
		base := filepath.Base(filepath.Clean(p))
		if !labelOK(base) {
			return nil, fmt.Errorf("confine: the root %s has no name to label it by", p)
		}
		l := base
		for n := 2; seen[strings.ToLower(l)]; n++ {
			l = fmt.Sprintf("%s-%d", base, n)
		}
		seen[strings.ToLower(l)] = true
		out[i] = l
	}
	return out, nil
}

// labelOK reports whether l can name an entry of the top folder.
func labelOK(l string) bool {
	return l != "" && l != "." && l != ".." && !strings.ContainsAny(l, "/\\\x00") && !hasVolume(l)
}

// Disjoint refuses roots (absolute, their symbolic links resolved) where
// one is the same folder as another or holds it: each root must be its
// own boundary, and a file must have one name. The same folder is also
// the same file by the system's account (os.SameFile: another spelling
// on a case-insensitive disk, a bind mount).
func Disjoint(paths []string) error {
	for i, a := range paths {
		for _, b := range paths[i+1:] {
			switch {
			case a == b || sameDir(a, b):
				return fmt.Errorf("the root %s is given twice", a)
			case within(b, a):
				return fmt.Errorf("the root %s is inside the root %s: roots may not hold one another", b, a)
			case within(a, b):
				return fmt.Errorf("the root %s is inside the root %s: roots may not hold one another", a, b)
			}
		}
	}
	return nil
}

// sameDir reports whether a and b are the same folder on the disk.
func sameDir(a, b string) bool {
	x, err1 := os.Stat(a)
	y, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}

// within reports whether p is strictly inside dir (both clean, absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// NewRoots opens the sandbox of roots: with one, [New] of it (its label
// unused); with several, the top folder over an FS of each. Every root
// is judged by pol, relative to itself.
func NewRoots(roots []Dir, kind Kind, pol *policy.Policy) (*FS, error) {
	switch {
	case len(roots) == 0:
		return nil, errors.New("confine: no root")
	case len(roots) == 1:
		return New(roots[0].Path, kind, pol)
	case len(roots) > MaxRoots:
		return nil, fmt.Errorf("confine: %d roots, at most %d", len(roots), MaxRoots)
	case pol == nil:
		return nil, errors.New("confine: nil policy")
	}
	top := &FS{pol: pol, kind: kind, walk: true}
	seen := map[string]bool{}
	for _, r := range roots {
		if !labelOK(r.Label) || seen[strings.ToLower(r.Label)] {
			top.Close()
			return nil, fmt.Errorf("confine: root label %q is not one unique name", r.Label)
		}
		seen[strings.ToLower(r.Label)] = true
		sub, err := New(r.Path, kind, pol)
		if err != nil {
			top.Close()
			return nil, err
		}
		top.subs = append(top.subs, sub)
		top.labels = append(top.labels, r.Label)
	}
	top.kind = top.subs[0].kind
	return top, nil
}

// Labels are the roots' labels in the order given, or nil for a sandbox
// of one root (whose files are named from it).
func (f *FS) Labels() []string { return append([]string(nil), f.labels...) }

// pick finds the root that name (the guest's form, relative to the top)
// is in and name relative to it. sub is nil for the top folder itself;
// for a sandbox of one root it is f and name as given.
func (f *FS) pick(name string) (sub *FS, rest string, err error) {
	if f.subs == nil {
		return f, name, nil
	}
	if strings.IndexByte(name, 0) >= 0 {
		return nil, "", syscall.EINVAL
	}
	parts := splitPath(name)
	for len(parts) > 0 && (parts[0] == "" || parts[0] == ".") {
		parts = parts[1:]
	}
	if allDots(parts) {
		return nil, ".", nil
	}
	if parts[0] == ".." {
		return nil, "", ErrEscape // above the top: out of every root
	}
	for i, l := range f.labels {
		if l == parts[0] {
			rest = strings.Join(parts[1:], "/")
			if rest == "" {
				rest = "."
			}
			return f.subs[i], rest, nil
		}
	}
	return nil, "", syscall.ENOENT
}

// topInfo describes the top folder: a read-only folder of no disk, whose
// time is the Unix epoch (a fixed one: the same answer in every session
// and every replay; time.Time's zero is no time WASI can carry).
type topInfo struct{}

func (topInfo) Name() string       { return "." }
func (topInfo) Size() int64        { return 0 }
func (topInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (topInfo) ModTime() time.Time { return time.Unix(0, 0).UTC() }
func (topInfo) IsDir() bool        { return true }
func (topInfo) Sys() any           { return nil }

// topEntry is one root as an entry of the top folder.
type topEntry string

func (e topEntry) Name() string               { return string(e) }
func (topEntry) IsDir() bool                  { return true }
func (topEntry) Type() fs.FileMode            { return fs.ModeDir }
func (e topEntry) Info() (fs.FileInfo, error) { return topInfo{}, nil }

// topDir is the open top folder: its labels, listed in turn.
type topDir struct {
	labels []string
	at     int
}

func (d *topDir) Read([]byte) (int, error)          { return 0, syscall.EISDIR }
func (d *topDir) ReadAt([]byte, int64) (int, error) { return 0, syscall.EISDIR }
func (d *topDir) Close() error                      { return nil }
func (d *topDir) Stat() (fs.FileInfo, error)        { return topInfo{}, nil }

func (d *topDir) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekStart {
		return 0, syscall.EINVAL
	}
	d.at = 0
	return 0, nil
}

func (d *topDir) ReadDir(n int) ([]fs.DirEntry, error) {
	left := d.labels[d.at:]
	if n > 0 && len(left) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(left) {
		left = left[:n]
	}
	out := make([]fs.DirEntry, len(left))
	for i, l := range left {
		out[i] = topEntry(l)
	}
	d.at += len(left)
	return out, nil
}
