package tools

import (
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/moatdev/moat/guest/proto"
)

// stat describes one path without following it if it is a symlink, so the
// model can learn where a link points before deciding to read through it.
func stat(fsys fs.FS, a proto.StatArgs) (string, error) {
	p, err := cleanPath(a.Path)
	if err != nil {
		return "", err
	}
	// Lstat: describing a symlink must not follow it (its target may be
	// outside the root, or another symlink).
	info, err := fs.Lstat(fsys, p)
	if err != nil {
		return "", fsError(proto.Stat, a.Path, err)
	}
	var b strings.Builder
	fmtTo(&b, "path: %s\n", quotePath(p))
	fmtTo(&b, "kind: %s\n", fileKind(info.Mode()))
	if n := info.Size(); n < 1000 {
		fmtTo(&b, "size: %d bytes\n", n)
	} else {
		fmtTo(&b, "size: %d bytes (%s)\n", n, humanSize(n))
	}
	// WASI carries no permission bits (Go's wasip1 port reports a fixed
	// 0600/0700), nor Go's port the other times, so the host is asked
	// (wasifs.FS.Attrs, moat.stat); without its answer, printing them
	// would be a made-up answer.
	attrs, ok := hostAttrs(fsys, p)
	if ok {
		fmtTo(&b, "mode: %s (%s)\n", octalMode(attrs.Mode), modeString(info.Mode(), attrs.Mode))
	} else {
		b.WriteString("mode: not visible inside the sandbox (WASI carries no permission bits)\n")
	}
	fmtTo(&b, "modified: %s", info.ModTime().UTC().Format(time.RFC3339))
	if ok {
		for _, t := range []struct {
			key  string
			has  uint32
			when time.Time
		}{{"accessed", proto.AttrAccessed, attrs.Accessed}, {"changed", proto.AttrChanged, attrs.Changed}, {"created", proto.AttrBorn, attrs.Born}} {
			if attrs.Has&t.has != 0 {
				fmtTo(&b, "\n%s: %s", t.key, t.when.UTC().Format(time.RFC3339))
			}
		}
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := fs.ReadLink(fsys, p)
		switch {
		case err == nil:
			fmtTo(&b, "\ntarget: %s", quotePath(target))
		case isEscape(err):
			b.WriteString("\ntarget: outside the sandbox (not followed)")
		default:
			b.WriteString("\ntarget: unreadable")
		}
	}
	return b.String(), nil
}

// hostAttrs is what the host says of p beside WASI's filestat (its
// permission bits and times), where the filesystem can ask it.
func hostAttrs(fsys fs.FS, p string) (proto.Attrs, bool) {
	h, ok := fsys.(interface {
		Attrs(name string) (proto.Attrs, error)
	})
	if !ok {
		return proto.Attrs{}, false
	}
	a, err := h.Attrs(p)
	return a, err == nil
}

// octalMode is bits in octal as chmod takes them: four digits ("0644",
// "1777").
func octalMode(bits uint32) string {
	s := strconv.FormatUint(uint64(bits&0o7777), 8)
	return strings.Repeat("0", max(4-len(s), 0)) + s
}

// modeString is bits (the permission bits with setuid, setgid and
// sticky) as ls shows them, after the kind's letter of kind:
// "-rw-r--r--", "drwxr-xr-x", "lrwxrwxrwx".
func modeString(kind fs.FileMode, bits uint32) string {
	b := []byte("?rwxrwxrwx")
	for _, k := range []struct {
		is     func(fs.FileMode) bool
		letter byte
	}{
		{func(t fs.FileMode) bool { return t == 0 }, '-'},
		{func(t fs.FileMode) bool { return t&fs.ModeDir != 0 }, 'd'},
		{func(t fs.FileMode) bool { return t&fs.ModeSymlink != 0 }, 'l'},
		{func(t fs.FileMode) bool { return t&fs.ModeNamedPipe != 0 }, 'p'},
		{func(t fs.FileMode) bool { return t&fs.ModeSocket != 0 }, 's'},
		{func(t fs.FileMode) bool { return t&fs.ModeCharDevice != 0 }, 'c'},
		{func(t fs.FileMode) bool { return t&fs.ModeDevice != 0 }, 'b'},
	} {
		if k.is(kind.Type()) {
			b[0] = k.letter
			break
		}
	}
	for i := range 9 {
		if bits&(1<<(8-i)) == 0 {
			b[1+i] = '-'
		}
	}
	// setuid, setgid and sticky replace the execute bit of their class:
	// lower case over an execute bit, upper case without one.
	for i, special := range []uint32{0o4000, 0o2000, 0o1000} {
		if bits&special == 0 {
			continue
		}
		at := 3 + 3*i
		c := byte("sst"[i])
		if b[at] == '-' {
			c -= 'a' - 'A'
		}
		b[at] = c
	}
	return string(b)
}
