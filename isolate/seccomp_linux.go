package isolate

// The seccomp filter: the child's one layer that holds on every kernel,
// build and thread, because SECCOMP_FILTER_FLAG_TSYNC reaches every thread
// in one call. seccomp is not a Linux security module; Landlock, which is,
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

// deniedSyscalls change the mount table or enter or create namespaces. A
// root-in-namespace child could otherwise remount its read-only binds
// read-write: the binds were made inside the namespace, so their flags are
// not locked. Landlock forbids this too, where the kernel has it; this
// filter holds everywhere.
var deniedSyscalls = []uintptr{
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_MOUNT_SETATTR, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_PTRACE, unix.SYS_BPF,
	unix.SYS_PERF_EVENT_OPEN, unix.SYS_KEXEC_LOAD, unix.SYS_INIT_MODULE,
	unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_SWAPON, unix.SYS_SWAPOFF,
}

// namespaceCloneFlags in clone(2)'s flags are refused; clone3 is answered
// ENOSYS (its flags sit behind a pointer BPF cannot follow) and Go and libc
// fall back to clone.
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// seccompProgram builds the filter: wrong architecture kills the process;
// the denied syscalls get EPERM; everything else is allowed.
func seccompProgram(arch uint32) []unix.SockFilter {
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	// Jumps to the shared tail are patched once its position is known.
	type patch struct {
		at     int
		target int // 0 eperm, 1 enosys, 2 clone
	}
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
		jumpTo(jge, x32SyscallBit, 0) // the x32 ABI's numbers would bypass the list
	}
	for _, nr := range deniedSyscalls {
		jumpTo(jeq, uint32(nr), 0)
	}
	jumpTo(jeq, unix.SYS_CLONE3, 1)
	jumpTo(jeq, unix.SYS_CLONE, 2)
	emit(ret, unix.SECCOMP_RET_ALLOW)
	tails := [3]int{}
	tails[0] = len(prog)
	emit(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	tails[1] = len(prog)
	emit(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	tails[2] = len(prog)
	emit(ldAbs, seccompArg0)
	prog = append(prog, unix.SockFilter{Code: jset, Jt: 0, Jf: 1, K: namespaceCloneFlags})
	emit(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	emit(ret, unix.SECCOMP_RET_ALLOW)
	// The shared tail sits after every jump, so each jump is forward, and
	// the whole program is far shorter than the 255 a jump can span.
	for _, p := range patches {
		prog[p.at].Jt = uint8(tails[p.target] - p.at - 1)
	}
	return prog
}

// installSeccomp loads the filter on every thread (TSYNC).
func installSeccomp() (string, error) {
	arch := auditArch()
	if arch == 0 {
		return "not applied: no filter for " + runtime.GOARCH, nil
	}
	prog := seccompProgram(arch)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return "", e
	}
	if r != 0 {
		return "", fmt.Errorf("thread %d could not be synchronised", r)
	}
	return fmt.Sprintf("applied (%d syscalls refused, all threads)", len(deniedSyscalls)), nil
}
