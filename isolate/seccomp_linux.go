package isolate

// The seccomp filter, an allow-list: the child's one layer that holds on
// every kernel, build and thread, because SECCOMP_FILTER_FLAG_TSYNC
// reaches every thread in one call. seccomp is not a Linux security module; Landlock, which is,
// lives in landlock_linux.go.

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccomp_data offsets (include/uapi/linux/seccomp.h).
const (
	seccompNr     = 0
	seccompArch   = 4
	seccompArg0   = 16 // low 32 bits on little-endian machines
	x32SyscallBit = 0x40000000
)

// auditArch is the AUDIT_ARCH of this build; 0 where the filter is not built.
func auditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	case "riscv64":
		return unix.AUDIT_ARCH_RISCV64
	}
	return 0
}

// namespaceCloneFlags in clone(2)'s flags are refused even with
// CLONE_THREAD; clone3 is not on the allow-list (its flags sit behind a
// pointer BPF cannot follow) and Go and glibc fall back to clone.
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// seccompProgram builds the filter: a wrong architecture kills the
// process; the allowed syscalls (syscalls_linux.go) pass; clone passes
// only to start a thread; everything else fails with ENOSYS, the answer
// for a syscall this kernel does not have, so callers fall back rather
// than retry.
func seccompProgram(arch uint32, allowed []uintptr) []unix.SockFilter {
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	const (
		toAllow = iota
		toENOSYS
		toClone
	)
	// Jumps to the shared tail are patched once its position is known.
	type patch struct{ at, target int }
	var prog []unix.SockFilter
	var patches []patch
	emit := func(code uint16, k uint32) { prog = append(prog, unix.SockFilter{Code: code, K: k}) }
	jumpTo := func(code uint16, k uint32, target int) {
		patches = append(patches, patch{len(prog), target})
		emit(code, k)
	}
	emit(ldAbs, seccompArch)
	prog = append(prog, unix.SockFilter{Code: jeq, Jt: 1, Jf: 0, K: arch})
	emit(ret, unix.SECCOMP_RET_KILL_PROCESS)
	emit(ldAbs, seccompNr)
	if arch == unix.AUDIT_ARCH_X86_64 {
		jumpTo(jge, x32SyscallBit, toENOSYS) // the x32 ABI's numbers alias the allowed ones
	}
	for _, nr := range allowed {
		jumpTo(jeq, uint32(nr), toAllow)
	}
	jumpTo(jeq, unix.SYS_CLONE, toClone)
	var tails [3]int
	tails[toENOSYS] = len(prog)
	emit(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	tails[toAllow] = len(prog)
	emit(ret, unix.SECCOMP_RET_ALLOW)
	// clone: a thread of this process, in its namespaces, or EPERM.
	tails[toClone] = len(prog)
	emit(ldAbs, seccompArg0)
	prog = append(prog, unix.SockFilter{Code: jset, Jt: 2, Jf: 0, K: namespaceCloneFlags})
	prog = append(prog, unix.SockFilter{Code: jset, Jt: 0, Jf: 1, K: unix.CLONE_THREAD})
	emit(ret, unix.SECCOMP_RET_ALLOW)
	emit(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	// The shared tail sits after every jump, so each jump is forward; the
	// program must stay shorter than the 255 a jump can span
	// (TestSeccompProgramShape).
	for _, p := range patches {
		prog[p.at].Jt = uint8(tails[p.target] - p.at - 1)
	}
	return prog
}

// syscallGroup is one group of the allow-list: what needs the calls, and
// their numbers.
type syscallGroup struct {
	group string
	nrs   []uintptr
}

// allowedNumbers is the allow-list flattened, in its order.
func allowedNumbers() []uintptr {
	var nrs []uintptr
	for _, g := range allowedSyscalls {
		nrs = append(nrs, g.nrs...)
	}
	return nrs
}

// installSeccomp loads the filter on every thread (TSYNC).
func installSeccomp() (string, error) {
	arch := auditArch()
	if arch == 0 {
		return "not applied: no filter for " + runtime.GOARCH, nil
	}
	nrs := allowedNumbers()
	prog := seccompProgram(arch, nrs)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return "", e
	}
	if r != 0 {
		return "", fmt.Errorf("thread %d could not be synchronised", r)
	}
	return fmt.Sprintf("allow-list, %d calls (every other call fails with ENOSYS; clone only starts threads)", len(nrs)+1), nil
}
