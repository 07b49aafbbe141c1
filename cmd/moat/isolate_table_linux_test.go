package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
	"github.com/moatdev/moat/host/runner"
	"github.com/moatdev/moat/isolate"
)

// TestEscapeTableIsolated runs the shared escape table through the
// isolated executor, isolate.Start with Require, as moat itself starts it
// (this test binary re-executes itself as the sandbox child through
// TestMain's "moat" command): every tool, each resolver, and once with
// confinement switched off (confine.Unconfined) to show the namespace layer
// alone still stops every escape whose target lies outside the root. The
// deny-list is the confined filesystem's job, so with Unconfined the denied
// files inside the root are readable: that run asserts nothing about them
// and logs them, the layer's documented limit (SECURITY.md).
func TestEscapeTableIsolated(t *testing.T) {
	cache := isolatedTable(t)
	for _, c := range confinetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // each case waits mostly on its children starting
			root := confinetest.Build(t, c)
			outsideTarget := targetOutside(root, c.Open)
			for _, k := range []confine.Kind{confine.Root, confine.Openat2, confine.Unconfined} {
				isolatedRun(t, runner.Config{Root: root, Resolver: k, CacheDir: cache, Timeout: 30 * time.Second}, c, c.Open, "", outsideTarget)
			}
		})
	}
}

// isolatedTable skips where the isolated table cannot run (-short: a
// child a case; no user namespaces) and returns the shared compile cache.
func isolatedTable(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox child per case")
	}
	if !userNamespacesWork() {
		t.Skip("unprivileged user namespaces are unavailable here, so --isolate require cannot start")
	}
	return sharedCache(t)
}

// isolatedRun asks every tool about p (walking top, "" for the whole
// tree) through the isolated child cfg starts, and judges the answers:
// with confinement no secret at all; without it none when c's target is
// outside every root (outside), only logged when it is a denied file or
// another root's; the inside read where c has one.
func isolatedRun(t *testing.T, cfg runner.Config, c confinetest.Case, p, top string, outside bool) {
	t.Helper()
	k := cfg.Resolver
	ex, err := isolate.Start(context.Background(), isolate.Require, cfg, io.Discard)
	if err != nil {
		t.Fatalf("%v: isolate.Start(Require): %v", k, err)
	}
	got := confinetest.EveryToolIn(t, ex, p, top)
	ex.Close()
	leaked := strings.Contains(got, confinetest.Secret)
	switch {
	case k != confine.Unconfined && leaked:
		t.Fatalf("%v, isolated, %d root(s): the secret leaked through a tool:\n%s", k, len(cfg.Dirs()), got)
	case k == confine.Unconfined && leaked && outside:
		t.Fatalf("isolated without confinement: %s reached a file outside the root(s):\n%s", c.Open, got)
	case k == confine.Unconfined && leaked:
		t.Logf("isolated without confinement: %s (denied, or in another root) is readable: the confined filesystem's job", c.Open)
	}
	if c.Inside != "" && k != confine.Unconfined && !strings.Contains(got, "read_file: "+c.Inside) {
		t.Fatalf("%v, isolated: the inside read failed:\n%s", k, got)
	}
}

// targetOutside reports whether following open from root lands outside it:
// the escapes that the namespace layer alone must stop.
func targetOutside(root, open string) bool {
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(open)))
	if err != nil {
		return true // dangling, looping or missing: nothing inside to read either
	}
	rel, err := filepath.Rel(root, real)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// TestEscapeTableIsolatedTwoRoots is TestEscapeTableIsolated with two
// roots, ROOT and OTHER (each a read-only bind of the child's, whose
// files hold the secret), each first in turn: the tools are asked about
// ROOT's names and walk ROOT. With confinement switched off the
// namespace layer still stops every escape whose target is outside both
// roots; a link from ROOT into OTHER is then readable (the child sees
// every root), the confined filesystem's to refuse, and is only logged.
func TestEscapeTableIsolatedTwoRoots(t *testing.T) {
	cache := isolatedTable(t)
	for _, c := range confinetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			if confinetest.CrossDotDot(c) {
				t.Skip("leaves ROOT by a lexical \"..\", which the engine refuses (host/engine TestCrossRootDotDot) and the guest cleans to OTHER's own name")
			}
			t.Parallel()
			for _, otherFirst := range []bool{false, true} {
				roots := confinetest.BuildTwo(t, c, otherFirst)
				outsideBoth := targetOutsideAll(roots, c.Open)
				for _, k := range []confine.Kind{confine.Root, confine.Openat2, confine.Unconfined} {
					cfg := runner.Config{Roots: confinetest.Dirs(t, roots), Resolver: k, CacheDir: cache, Timeout: 30 * time.Second}
					isolatedRun(t, cfg, c, confinetest.TwoRootName(c), "ROOT", outsideBoth)
				}
			}
		})
	}
}

// targetOutsideAll reports whether following open from the root ROOT
// of roots lands outside every one of them.
func targetOutsideAll(roots []string, open string) bool {
	from := roots[0]
	if filepath.Base(from) != "ROOT" {
		from = roots[1]
	}
	real, err := filepath.EvalSymlinks(filepath.Join(from, filepath.FromSlash(open)))
	if err != nil {
		return true // dangling, looping or missing: nothing inside to read either
	}
	for _, r := range roots {
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return false
		}
	}
	return true
}
