package confine

import (
	"strings"

	"github.com/moatdev/moat/guest/proto"
)

// Attrs describes the file p names (its path from the mount's root, bytes
// as they are, with no WASI escape) as the guest's lstat of it does, and
// answers what WASI's filestat leaves out: the permission bits and the
// times the host keeps (the runner's moat.stat). It resolves p with the
// walker that answers the mount's Lstat (FS.Lstat): every component
// judged by the deny-list, every symlink on the way followed only
// inside the root and the final one not at all, the same resolver, the
// same roots. A denial, an escape or a revoked mount is an error, and
// nothing is described.
func (c *MountControl) Attrs(p string) (proto.Attrs, error) {
	if c.mt.dead.Load() {
		return proto.Attrs{}, proto.ErrnoRevoked
	}
	if p = strings.TrimLeft(p, "/"); p == "" {
		p = "."
	}
	fi, err := c.mt.f.Lstat(p)
	if err != nil {
		return proto.Attrs{}, err
	}
	c.mt.note(p, Described)
	return proto.AttrsOf(fi), nil
}
