package confine

import (
	"io/fs"
	"path"
	"strings"

	"github.com/moatdev/moat/guest/proto"
)

// ReadFiles reads whole, back to back into buf, the regular files names
// (each one path component) of the folder dir (relative to the root, its
// bytes as they are, with no WASI escape), in one call: a grep opens tens
// of thousands of small files, and the three or four host calls each cost
// more than the kernel's open and read (the runner's moat.read_files). It
// opens nothing a path_open of dir/name would not:
//
//   - the folder is opened as path_open opens it (FS.open: the walker
//     checks every component against the deny-list and the resolver,
//     and the identity of what was opened against what it saw);
//   - each name is one component, judged by the deny-list as the walker
//     judges a folder's child (Policy.DeniedChild), and opened beneath the
//     folder's descriptor without following a symlink (openat2
//     RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, O_NOFOLLOW), so rel/name is the
//     real path; a resolver without it (os.Root) opens rel/name through
//     the walker;
//   - only a regular file is read, never one opened once the mount is
//     revoked.
//
// sizes[i] (len(sizes) >= len(names)) is how many bytes names[i] took in
// buf, or -1: the guest opens it itself, and that open says why (an
// error, a denial, not a regular file, too large for buf, changing while
// it was read). It returns how many names it decided, in order; the rest
// did not fit in what was left of buf.
func (c *MountControl) ReadFiles(dir string, names []string, buf []byte, sizes []int32) int {
	if c.mt.dead.Load() {
		return 0
	}
	for i := range names {
		sizes[i] = proto.NotRead
	}
	// The folder by the walker, as path_open would open it: every
	// component checked, the identity of what was opened compared.
	if dir = strings.TrimLeft(dir, "/"); dir == "" {
		dir = "."
	}
	// With several roots, the folder's own root reads it; the top
	// holds no file.
	f, in, err := c.mt.f.pick(dir)
	if err != nil || f == nil {
		return len(names)
	}
	d, rel, err := f.open(in)
	if err != nil {
		return len(names) // the guest's own opens say why
	}
	defer d.Close()
	child, _ := d.(interface {
		openChild(name string) (handle, error)
	})
	at := 0
	for i, name := range names {
		if c.mt.dead.Load() {
			return i
		}
		if !oneComponent(name) {
			continue
		}
		// The folder is allowed, so this is the walker's judgement of
		// rel/name.
		if _, denied := f.pol.DeniedChild(rel, name); denied {
			continue
		}
		var h handle
		if child != nil {
			h, err = child.openChild(name)
		} else {
			h, _, err = f.open(path.Join(rel, name))
		}
		if err != nil {
			continue
		}
		if child != nil && f.red != nil {
			// The file's redacted view, as f.open gives it; a file too
			// large for what is left is not read for it.
			if h, err = f.childView(h, path.Join(rel, name), len(buf)-at); err != nil {
				continue
			}
		}
		size, regular := regularSize(h)
		switch {
		case !regular:
		case size >= int64(len(buf)-at):
			// Too large for what is left: the next call (or, with buf
			// empty, the guest) reads it.
			if at > 0 {
				h.Close()
				return i
			}
		default:
			if n, err := proto.ReadWhole(h, buf[at:]); err == nil {
				sizes[i] = int32(n)
				at += n
				c.mt.note(path.Join(dir, name), Opened)
			}
		}
		h.Close()
	}
	return len(names)
}

// oneComponent reports whether name names an entry of a folder
// (proto.EntryName), with no separator of this system's.
func oneComponent(name string) bool {
	return proto.EntryName(name) && !(backslashSeparates && strings.IndexByte(name, '\\') >= 0)
}

// regularSize is the size of an open regular file, as it was opened; not
// regular (a folder, whatever else the resolver lets through) is false.
func regularSize(h handle) (int64, bool) {
	if s, ok := h.(interface{ openedSize() int64 }); ok {
		return s.openedSize(), true
	}
	fi, err := h.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.Size(), true
}

// childView is the redacted view of h, a regular file opened beneath a
// folder as rel; one at least room bytes long is left as it is, for the
// size check to send to the guest's own open (which gives its view).
func (f *FS) childView(h handle, rel string, room int) (handle, error) {
	var fi fs.FileInfo
	var ok bool
	if o, is := h.(interface{ opened() (fs.FileInfo, bool) }); is {
		fi, ok = o.opened()
	}
	if !ok {
		var err error
		if fi, err = h.Stat(); err != nil {
			h.Close()
			return nil, err
		}
	}
	if fi.Size() >= int64(room) {
		return h, nil
	}
	return f.view(h, rel, fi)
}
