package tools

import (
	"io/fs"
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
	// 0600/0700), so printing them would be a made-up answer.
	b.WriteString("mode: not visible inside the sandbox (WASI carries no permission bits)\n")
	fmtTo(&b, "modified: %s", info.ModTime().UTC().Format(time.RFC3339))
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
