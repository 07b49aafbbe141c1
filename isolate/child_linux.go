package isolate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/runner"
)

// MaybeChild runs the sandbox child when args (os.Args[1:]) start with
// ChildArg, and reports its exit status.
func MaybeChild(ctx context.Context, args []string) (int, bool) {
	if len(args) == 0 || args[0] != ChildArg {
		return 0, false
	}
	return runChild(ctx, os.Stdin, os.Stdout, newRunner), true
}

// runnerFunc builds the child's executor; tests substitute a fake.
type runnerFunc func(context.Context, runner.Config) (engine.Executor, error)

// runChild is the child's whole life: read the plan, apply it, build the
// runner, serve calls until stdin closes. A cgo build's child runs it
// twice: the first image applies the plan and re-executes itself, and the
// second, locked by its C constructor (cgo_linux.go), takes up from there.
func runChild(ctx context.Context, in *os.File, outf *os.File, build runnerFunc) int {
	// The mount steps change this thread's view first; keep the main
	// goroutine on it. The mount namespace is shared by all threads, and
	// pivot_root moves every thread's root and cwd with it.
	runtime.LockOSThread()
	r := bufio.NewReader(in)
	out := bufio.NewWriter(outf)
	send := func(v any, trailer []byte) bool {
		return writeLine(out, v, trailer) == nil && out.Flush() == nil
	}
	fail := func(err error) int {
		rd := ready{Err: err.Error()}
		var se *StepError
		if errors.As(err, &se) {
			rd.Step, rd.Err = se.Step, se.Err.Error()
		}
		send(rd, nil)
		return 1
	}
	var h hello
	var st applied
	if line, reason := secondImage(); line != nil {
		if err := json.Unmarshal(line, &h); err != nil {
			return fail(&StepError{Step: "read plan", Err: err})
		}
		llErr, err := lockedBefore()
		if err != nil {
			return fail(&StepError{Step: "lock", Err: err})
		}
		abi, _ := LandlockABI()
		st.landlock = landlockState(ruleset{fd: -1, abi: abi, paths: h.Plan.Landlock, reason: reason}, llErr)
	} else {
		// Before anything else: drop what the parent's parent left open.
		closeInherited()
		// A cgo build re-executes itself once set up: hold this binary
		// open while its path can still be reached.
		exe := -1
		if cgoLinked {
			exe, _ = unix.Open("/proc/self/exe", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		}
		// The parent writes nothing after its hello until it has read
		// ready, so nothing past this line is buffered in r: a second
		// image reads the calls from stdin as this one would.
		line, err := r.ReadBytes('\n')
		if err != nil {
			fmt.Fprintln(os.Stderr, "moat: this entry point is only for moat's own sandbox child")
			return 2
		}
		if err := json.Unmarshal(line, &h); err != nil {
			return fail(&StepError{Step: "read plan", Err: err})
		}
		if st, err = apply(h.Plan, line, exe); err != nil {
			return fail(err)
		}
	}
	if err := finish(h.Plan, &st); err != nil {
		return fail(err)
	}
	if h.Probe != nil {
		send(ready{OK: true, Landlock: st.landlock, Seccomp: st.seccomp, Keyring: st.keyring, Probe: runProbes(h.Plan, *h.Probe, strings.HasPrefix(st.landlock, "applied"))}, nil)
		if h.Probe.Hold {
			io.Copy(io.Discard, r)
		}
		return 0
	}
	rn, err := build(ctx, h.Plan.Runner)
	if err != nil {
		send(ready{Step: "runner", Err: err.Error()}, nil)
		return 1
	}
	defer rn.Close()
	if !send(ready{OK: true, Landlock: st.landlock, Seccomp: st.seccomp, Keyring: st.keyring}, nil) {
		return 1
	}
	// Set up: every thread is as locked down as this one (the guests'
	// goroutines already run on any of them). A goroutine locked to its
	// thread has to be handed back to that thread each time it wakes, a
	// switch between threads twice a call (the parent's request, the
	// guest's answer), so the calls are served unlocked.
	runtime.UnlockOSThread()
	var told uint64 // the greps the splitter had learned from when it last told the parent
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return 0 // the parent closed the pipe: the session is over
		}
		var req request
		var rep reply
		if err := json.Unmarshal(line, &req); err != nil {
			rep.Err = "bad request from parent: " + err.Error()
		} else if req.Recall, err = readTrailer(r, req.RecallBytes); err != nil {
			return 1 // the stream is cut or out of step: nothing more can be read from it
		} else {
			callCtx := ctx
			var touched *confine.Touches
			if req.Observe {
				touched = &confine.Touches{}
				callCtx = confine.WithObserver(ctx, touched)
			}
			mem, _ := rn.(memory)
			var fd confine.Findings
			if mem != nil && len(req.Recall) > 0 && fd.UnmarshalBinary(req.Recall) == nil {
				mem.Recall(fd)
			}
			if mem != nil && len(req.Weights) > 0 {
				mem.Remember(req.Weights)
			}
			resp, err := rn.Exec(callCtx, req.Request)
			if touched != nil {
				rep.Touched = touched.List()
			}
			if mem != nil && req.Learn && proto.ToolIs(req.Tool, proto.WalksTree) {
				if ws, n := mem.Weights(); n > told {
					rep.Learned, told = ws, n
				}
			}
			if mem != nil && req.Report {
				if fd := mem.Fresh(); fd.Len() > 0 {
					rep.Found, _ = fd.MarshalBinary()
				}
			}
			rep.Resp = resp
			if err != nil {
				rep.Err = err.Error()
				rep.Restart = errors.Is(err, runner.ErrTimeout)
			}
		}
		rep.FoundBytes = len(rep.Found)
		if !send(rep, rep.Found) {
			return 1
		}
	}
}

// closeInherited closes every descriptor above stderr that came through
// exec. moat opens its own descriptors close-on-exec (Go always does), so
// anything above 2 that survived exec without FD_CLOEXEC was inherited by
// the parent from whatever started it (a shell's `exec 7<~/.ssh/id_rsa`)
// and would otherwise sit in the sandbox, outside its mount namespace. The
// descriptors this child's own runtime has opened since (epoll, eventfd)
// carry FD_CLOEXEC and are kept. Close_range cannot be used over the whole
// range for that reason: it would close the runtime's too. The list comes
// from /proc/self/fd, still the host's /proc here, before pivot_root; where
// it cannot be read, every number up to the descriptor limit is tried.
func closeInherited() {
	for _, fd := range openDescriptors() {
		if fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}

// openDescriptors lists this process's open descriptors.
func openDescriptors() []int {
	var fds []int
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range ents {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				fds = append(fds, n)
			}
		}
		return fds
	}
	var lim unix.Rlimit
	max := uint64(1 << 16)
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < max {
		max = lim.Cur
	}
	for fd := 3; uint64(fd) < max; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			fds = append(fds, fd)
		}
	}
	return fds
}

// applied says what the best-effort steps did.
type applied struct {
	landlock, seccomp string
	keyring           *keyringState
}

// apply performs the plan, in bubblewrap's order: mount namespace private,
// scratch tmpfs, pivot_root, binds from the old root, detach the old root,
// read-only root, limits, no_new_privs, then the lock (every capability
// dropped, Landlock enforced; lockSandbox, on every thread, in the way
// the build allows). hello is the plan's own line and exe this binary,
// for a cgo build's re-execution; there apply does not return on success.
func apply(p Plan, hello []byte, exe int) (applied, error) {
	var st applied
	step := func(name string, err error) error {
		if err != nil {
			return &StepError{Step: name, Err: err}
		}
		return nil
	}
	if len(p.Mounts) == 0 || p.Mounts[0].Kind != "tmpfs" || p.Mounts[0].Target != "/" {
		return st, step("plan", errors.New("the first mount must be the root tmpfs"))
	}
	// 1. Nothing we mount may propagate back to the host's namespace.
	if err := step("make / private", unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")); err != nil {
		return st, err
	}
	// 2. The UTS namespace's own name, so nothing leaks the host's.
	if err := step("sethostname", unix.Sethostname([]byte(p.Hostname))); err != nil {
		return st, err
	}
	// 3. The new root: a small tmpfs over the scratch directory.
	if err := step("mount tmpfs", unix.Mount("tmpfs", p.Scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, p.Mounts[0].Data)); err != nil {
		return st, err
	}
	// 4. pivot_root into the tmpfs, the old root under it until the binds
	// are made from it: the sources are reached through the old root, so
	// one below the scratch directory is not hidden by the tmpfs.
	old := filepath.Join(p.Scratch, p.OldRoot)
	if err := step("mkdir old root", os.Mkdir(old, 0o700)); err != nil {
		return st, err
	}
	if err := step("pivot_root", unix.PivotRoot(p.Scratch, old)); err != nil {
		return st, err
	}
	if err := step("chdir /", unix.Chdir("/")); err != nil {
		return st, err
	}
	// 5. Read-only binds of what the child may see.
	for _, m := range p.Mounts[1:] {
		if m.Kind != "bind" || !filepath.IsAbs(m.Target) || !filepath.IsAbs(m.Source) {
			return st, step("plan", fmt.Errorf("unsupported mount %+v", m))
		}
		// MkdirAll: with several roots the targets are /sandbox/LABEL.
		if err := step("mkdir "+m.Target, os.MkdirAll(m.Target, 0o755)); err != nil {
			return st, err
		}
		if err := bindReadOnly(filepath.Join("/", p.OldRoot, m.Source), m.Target, m.Target); err != nil {
			return st, err
		}
	}
	// 5b. A cgo build re-executes itself from the host's tree, where the
	// dynamic loader finds its libraries (lockSandbox): hold it, detached,
	// by a descriptor that the exec closes.
	oldRoot := -1
	if cgoLinked {
		fd, err := unix.Open("/"+p.OldRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return st, step("hold the host tree", err)
		}
		oldRoot = fd
		defer unix.Close(fd)
	}
	// 6. Detach the host's whole tree: from here on no path reaches it.
	if err := step("umount old root", unix.Unmount("/"+p.OldRoot, unix.MNT_DETACH)); err != nil {
		return st, err
	}
	if err := step("rmdir old root", unix.Rmdir("/"+p.OldRoot)); err != nil {
		return st, err
	}
	// 7. The root tmpfs itself becomes read-only.
	if err := step("remount / read-only", unix.Mount("none", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")); err != nil {
		return st, err
	}
	// 8. Resource limits (process-wide).
	for _, l := range p.Rlimits {
		res, ok := rlimitByName[l.Name]
		if !ok {
			return st, step("setrlimit", fmt.Errorf("unknown limit %q", l.Name))
		}
		if err := step("setrlimit "+l.Name, unix.Setrlimit(res, &unix.Rlimit{Cur: l.Cur, Max: l.Max})); err != nil {
			return st, err
		}
	}
	// 9. no_new_privs: every thread already has it, inherited from the
	// parent's thread that forked us (see spawn); set it here too and check.
	if p.NoNewPrivs {
		if err := step("no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)); err != nil {
			return st, err
		}
		if v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || v != 1 {
			return st, step("no_new_privs", fmt.Errorf("still unset after prctl (%v)", err))
		}
	}
	// 10. The lock, once no mount is left to make: no capability on any
	// thread, and Landlock (best effort: an extra wall, never the only
	// one) on every thread.
	rs := landlockRuleset(p.Landlock)
	llErr, err := lockSandbox(exe, oldRoot, rs, hello, os.Environ())
	if err != nil {
		return st, err
	}
	st.landlock = landlockState(rs, llErr)
	return st, nil
}

// finish is the setup both images end with: note the session keyring
// (joined fresh by the parent's forking thread, see spawn) while keyctl
// may still be called, then seccomp last, as bubblewrap does: after it no
// mount can change and only the allow-list's calls are left.
func finish(p Plan, st *applied) error {
	st.keyring = readKeyring()
	if p.Seccomp {
		s, err := installSeccomp()
		if err != nil {
			return &StepError{Step: "seccomp", Err: err}
		}
		st.seccomp = s
	}
	return nil
}

var rlimitByName = map[string]int{"CORE": unix.RLIMIT_CORE, "FSIZE": unix.RLIMIT_FSIZE, "NOFILE": unix.RLIMIT_NOFILE}

// bindReadOnly binds src (recursively) at dst and makes every mount of it
// read-only, nosuid, nodev and noexec. mount_setattr(AT_RECURSIVE) reaches
// submounts too; a plain MS_REMOUNT would leave them writable. On kernels
// without it (before 5.12) the bind is not recursive, so submounts are
// simply absent, and the one mount is remounted keeping its locked flags.
func bindReadOnly(src, dst, name string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return &StepError{Step: "bind " + name, Err: err}
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
	err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &attr)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) {
		return &StepError{Step: "remount " + name + " read-only", Err: err}
	}
	if err := unix.Unmount(dst, unix.MNT_DETACH); err != nil {
		return &StepError{Step: "remount " + name + " read-only", Err: err}
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return &StepError{Step: "bind " + name, Err: err}
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(dst, &sfs); err != nil {
		return &StepError{Step: "remount " + name + " read-only", Err: err}
	}
	// In a user namespace the flags inherited from the host's mount are
	// locked: a remount that drops one (noatime, say) fails with EPERM.
	keep := uintptr(0)
	for st, ms := range map[int64]uintptr{
		unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME,
		unix.ST_RELATIME: unix.MS_RELATIME, unix.ST_SYNCHRONOUS: unix.MS_SYNCHRONOUS,
	} {
		if int64(sfs.Flags)&st != 0 { // Flags is an int32 on 386
			keep |= ms
		}
	}
	flags := unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | keep
	if err := unix.Mount("none", dst, "", flags, ""); err != nil {
		return &StepError{Step: "remount " + name + " read-only", Err: err}
	}
	return nil
}

// errName is the errno's symbolic name where there is one (stable across
// locales and Go versions), else the error text.
func errName(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		if n := unix.ErrnoName(en); n != "" {
			return n
		}
	}
	return err.Error()
}
