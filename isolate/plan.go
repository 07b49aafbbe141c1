package isolate

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/runner"
)

// Clone flags, spelled out so a Plan can be built and tested on any OS.
// Values are Linux's (include/uapi/linux/sched.h); TestCloneFlagValues
// (isolate_linux_test.go) checks them against golang.org/x/sys/unix.
const (
	CloneNewNS   = 0x00020000
	CloneNewUTS  = 0x04000000
	CloneNewIPC  = 0x08000000
	CloneNewUser = 0x10000000
	CloneNewPID  = 0x20000000
	CloneNewNet  = 0x40000000
)

// Paths inside the child's view. They are the only names the child has.
const (
	InsideRoot  = "/sandbox" // the read-only bind of the sandbox root
	InsideCache = "/cache"   // the read-only bind of the compiled-module cache
	oldRootName = ".oldroot" // put_old for pivot_root, removed right after
	// scratchDir is the host directory the new root's tmpfs is mounted on
	// before pivot_root, as bubblewrap mounts its base on /tmp. The mount
	// lives only in the child's private mount namespace.
	scratchDir = "/tmp"
	hostname   = "moat-sandbox"
)

// IDMap maps a range of ids inside the user namespace to the caller's.
type IDMap struct {
	Inside, Outside, Size int
}

// Mount is one mount of the child's new root, in the order applied.
type Mount struct {
	Kind     string // "tmpfs" or "bind"
	Source   string // host path of a bind; "" for tmpfs
	Target   string // path in the new root ("/" is the root itself)
	ReadOnly bool   // also nosuid, nodev, noexec: nothing in the child is ever executed from disk
	Data     string // tmpfs options
}

// Rlimit is a resource limit set in the child. Name is the RLIMIT_ suffix.
type Rlimit struct {
	Name     string
	Cur, Max uint64
}

// Plan is everything the child will do, decided by the parent from data
// alone. It travels to the child as the first line of the protocol.
type Plan struct {
	Cloneflags uintptr
	UIDMap     []IDMap
	GIDMap     []IDMap
	// Setgroups stays false: /proc/PID/setgroups is "deny", which an
	// unprivileged gid map requires and which stops the child from
	// dropping a group to get around a "deny for this group" permission.
	Setgroups  bool
	Hostname   string
	Scratch    string
	OldRoot    string
	Mounts     []Mount
	Rlimits    []Rlimit
	Env        []string // the child's whole environment
	NoNewPrivs bool
	Seccomp    bool     // the seccomp allow-list on every thread, installed last
	Landlock   []string // paths (child's view) readable under Landlock; all else denied
	// Runner is the config the child builds its runner with: the parent's,
	// with Root and CacheDir rewritten to the paths in the child's view.
	Runner runner.Config
}

// NewPlan builds the child's plan for cfg, run by the user uid/gid. The
// caller's ids are mapped to root inside the namespace, which only has
// meaning there: capabilities are recomputed at execve, and a non-zero uid
// inside would arrive without the CAP_SYS_ADMIN the mount steps need.
func NewPlan(cfg runner.Config, uid, gid int) (Plan, error) {
	for _, d := range cfg.Dirs() {
		if d.Path == "" || !filepath.IsAbs(d.Path) || filepath.Clean(d.Path) != d.Path {
			return Plan{}, fmt.Errorf("isolate: sandbox root must be an absolute clean path, got %q", d.Path)
		}
		if len(cfg.Roots) > 0 && (d.Label == "" || d.Label == "." || d.Label == ".." || strings.ContainsAny(d.Label, "/\\\x00")) {
			return Plan{}, fmt.Errorf("isolate: root label %q is not one path element", d.Label)
		}
	}
	if cfg.CacheDir != "" && !filepath.IsAbs(cfg.CacheDir) {
		return Plan{}, fmt.Errorf("isolate: cache dir must be absolute, got %q", cfg.CacheDir)
	}
	if uid < 0 || gid < 0 {
		return Plan{}, errors.New("isolate: uid and gid must be known")
	}
	p := Plan{
		Cloneflags: CloneNewUser | CloneNewNS | CloneNewNet | CloneNewPID | CloneNewIPC | CloneNewUTS,
		UIDMap:     []IDMap{{Inside: 0, Outside: uid, Size: 1}},
		GIDMap:     []IDMap{{Inside: 0, Outside: gid, Size: 1}},
		Hostname:   hostname,
		Scratch:    scratchDir,
		OldRoot:    oldRootName,
		Mounts: []Mount{
			// 1 MiB, 64 inodes: room for the mount points and nothing else.
			// Remounted read-only once the binds are in place.
			{Kind: "tmpfs", Target: "/", ReadOnly: true, Data: "mode=0755,size=1m,nr_inodes=64"},
			{Kind: "bind", Source: cfg.Root, Target: InsideRoot, ReadOnly: true},
		},
		Rlimits: []Rlimit{
			// A crash must not hand the child's memory (file contents) to
			// a core dump handler on the host.
			{Name: "CORE", Cur: 0, Max: 0},
		},
		// Nothing of ours, and no cgroup files: Go's runtime would
		// otherwise open the host's cgroup CPU limits at start to size
		// GOMAXPROCS and keep those descriptors for the child's life.
		Env:        []string{childGODEBUG},
		NoNewPrivs: true,
		Seccomp:    true,
		Landlock:   []string{InsideRoot},
	}
	rc := cfg
	rc.Root = InsideRoot
	rc.CacheDir = ""
	if len(cfg.Roots) > 0 {
		// Several roots: each bound read-only at /sandbox/LABEL, each its
		// own Landlock rule; /sandbox itself is a folder of the read-only
		// tmpfs, holding only their mount points.
		p.Mounts, p.Landlock = p.Mounts[:1], nil
		rc.Root, rc.Roots = "", make([]confine.Dir, len(cfg.Roots))
		for i, d := range cfg.Roots {
			in := InsideRoot + "/" + d.Label
			p.Mounts = append(p.Mounts, Mount{Kind: "bind", Source: d.Path, Target: in, ReadOnly: true})
			p.Landlock = append(p.Landlock, in)
			rc.Roots[i] = confine.Dir{Label: d.Label, Path: in}
		}
	}
	if cfg.CacheDir != "" {
		p.Mounts = append(p.Mounts, Mount{Kind: "bind", Source: filepath.Clean(cfg.CacheDir), Target: InsideCache, ReadOnly: true})
		p.Landlock = append(p.Landlock, InsideCache)
		rc.CacheDir = InsideCache
	}
	// The parent keeps the findings cache and the weights file: it sends
	// the child what they hold with the first call and takes what the
	// child found, and learned, from the answers (request.Recall and
	// Weights, reply.Found and Weights).
	rc.Findings, rc.Weights = "", ""
	p.Runner = rc
	return p, nil
}

// childGODEBUG is the child's only environment variable.
const childGODEBUG = "GODEBUG=containermaxprocs=0,updatemaxprocs=0"
