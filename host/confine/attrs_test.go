//go:build unix

package confine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
	"github.com/moatdev/moat/host/policy"
)

// TestAttrsEscapeTable runs the escape table through MountControl.Attrs
// (the guest's moat.stat) with each resolver, with one root and with
// two: it describes exactly what the mount's Lstat describes, the same
// file or the same refusal, and never a file holding the secret (each
// has confinetest.SecretMode). The control without confinement shows
// the check is real: there the same names describe the secrets' files.
func TestAttrsEscapeTable(t *testing.T) {
	leaks := 0
	for _, c := range confinetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			root := confinetest.Build(t, c)
			for _, k := range resolvers(t) {
				attrsLikeLstat(t, newFS(t, root, k), c.Open)
				for _, otherFirst := range []bool{false, true} {
					if confinetest.CrossDotDot(c) {
						continue // the engine's to refuse (confinetest.CrossDotDot)
					}
					roots := confinetest.BuildTwo(t, c, otherFirst)
					attrsLikeLstat(t, newRoots(t, k, roots...), confinetest.TwoRootName(c))
				}
			}
			pol, err := policy.New(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			u, err := confine.New(root, confine.Unconfined, pol)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			_, ctl := u.Mount()
			if a, err := ctl.Attrs(c.Open); err == nil && a.Mode == confinetest.SecretMode {
				leaks++
			}
		})
	}
	if leaks == 0 {
		t.Error("control: without confinement no name of the table described a secret's file")
	}
}

// attrsLikeLstat checks Attrs of p against the mount's Lstat of it.
func attrsLikeLstat(t *testing.T, f *confine.FS, p string) {
	t.Helper()
	_, ctl := f.Mount()
	a, err := ctl.Attrs(p)
	fi, lerr := f.Lstat(p)
	switch {
	case (err == nil) != (lerr == nil):
		t.Fatalf("%v: Attrs(%q) = %v, but Lstat = %v", f.Kind(), p, err, lerr)
	case err != nil:
		return
	case a.Mode == confinetest.SecretMode:
		t.Fatalf("%v: Attrs(%q) described a file holding the secret (mode %04o)", f.Kind(), p, a.Mode)
	case a.Mode != proto.ModeBits(fi.Mode()) || !a.Modified.Equal(fi.ModTime()):
		t.Fatalf("%v: Attrs(%q) = %04o %v, Lstat %v %v", f.Kind(), p, a.Mode, a.Modified, fi.Mode(), fi.ModTime())
	}
}

// TestAttrs: a 0640 file's bits and times; a denied file refused as
// the walker refuses it; a symlink out of the root described as the link
// itself, never its target; a revoked mount describes nothing.
func TestAttrs(t *testing.T) {
	for _, k := range resolvers(t) {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/f.txt: x", "ROOT/out => ../outside/secret", "ROOT/sub/"}})
			must(t, os.Chmod(filepath.Join(root, "f.txt"), 0o640))
			_, ctl := newFS(t, root, k).Mount()
			a, err := ctl.Attrs("/f.txt")
			if err != nil || a.Mode != 0o640 || a.Has&(proto.AttrAccessed|proto.AttrChanged) == 0 || a.Changed.IsZero() {
				t.Errorf("f.txt: %+v, %v", a, err)
			}
			if _, err := ctl.Attrs(".env"); !errors.Is(err, confine.ErrDenied) {
				t.Errorf(".env: %v, want a denial", err)
			}
			if _, err := ctl.Attrs("sub/../.git/config"); !errors.Is(err, confine.ErrDenied) {
				t.Errorf(".git/config: %v, want a denial", err)
			}
			if a, err := ctl.Attrs("out"); err != nil || a.Mode == confinetest.SecretMode {
				t.Errorf("out: %+v, %v (the link's own mode, not its target's)", a, err)
			}
			if _, err := ctl.Attrs("out/x"); err == nil {
				t.Error("out/x: described through a link out of the root")
			}
			ctl.Revoke()
			if _, err := ctl.Attrs("f.txt"); err == nil {
				t.Error("described after the mount was revoked")
			}
		})
	}
}
