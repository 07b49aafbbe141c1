//go:build amd64 || arm64 || riscv64

package isolate

import "golang.org/x/sys/unix"

// allowedSyscalls is the sandbox child's whole seccomp allow-list: the
// system calls the Go runtime, wazero, the guest's confined filesystem and
// the child's pipe protocol make once setup is done. Everything else fails
// with ENOSYS (seccomp_linux.go), so a system call added to the kernel
// later (open_tree_attr, a new clone) is refused without anyone naming it,
// and Go and glibc, which treat ENOSYS as "not here", fall back cleanly
// (clone3 to clone).
//
// The set was derived by tracing the children (strace -f, every call a
// child made after its seccomp call) through the isolate tests and the
// cmd/moat testscripts, both builds, and kept only where the caller is
// known. Left out on purpose although the runtime may try them: prctl
// (Go names its mappings with PR_SET_VMA and ignores the refusal), kill
// (the runtime's crash path, which then exits anyway), and every
// socket, keyring, mount, namespace, ptrace, bpf, module and file-changing
// call; the child's probes (runProbes) try several and must be refused. The names are the
// generic ones that amd64, arm64 and riscv64 share (golang.org/x/sys/unix
// gives each arch's numbers).
var allowedSyscalls = []syscallGroup{
	// The pipe protocol with the parent (stdin, stdout, stderr) and the
	// reads of open files (lseek: os.Root's directory reads): the bulk of
	// every call, so first in the filter.
	{"descriptor I/O", []uintptr{
		unix.SYS_READ, unix.SYS_WRITE, unix.SYS_PREAD64, unix.SYS_LSEEK,
		unix.SYS_CLOSE, unix.SYS_FCNTL, unix.SYS_FSTAT,
	}},
	// Go's scheduler: parking and waking threads, yielding, sleeping, and
	// the time where the vDSO cannot answer.
	{"scheduling and time", []uintptr{
		unix.SYS_FUTEX, unix.SYS_SCHED_YIELD, unix.SYS_NANOSLEEP,
		unix.SYS_SCHED_GETAFFINITY, unix.SYS_CLOCK_GETTIME,
	}},
	// Memory: the Go heap and its scavenger, goroutine and thread stacks,
	// glibc's malloc in cgo builds, and wazero's compiled code (mapped,
	// then made executable with mprotect) and guest memory.
	{"memory", []uintptr{
		unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_MADVISE, unix.SYS_BRK,
	}},
	// Threads: clone is not listed here but checked by the program itself
	// (only with CLONE_THREAD and without a namespace flag; counted in the
	// doctor's number); clone3 is not here, so it fails with ENOSYS and
	// glibc falls back to clone. A thread's own setup (glibc's robust
	// futex list and rseq area) and its exit, and the whole process's.
	{"threads", []uintptr{
		unix.SYS_SET_ROBUST_LIST, unix.SYS_RSEQ,
		unix.SYS_GETTID, unix.SYS_GETPID, unix.SYS_EXIT, unix.SYS_EXIT_GROUP,
	}},
	// Signals within the process: Go preempts a goroutine by sending its
	// thread SIGURG with tgkill, and every thread sets its signal stack
	// and mask; the runtime's handlers return through rt_sigreturn.
	{"signals", []uintptr{
		unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK, unix.SYS_RT_SIGRETURN,
		unix.SYS_SIGALTSTACK, unix.SYS_TGKILL,
	}},
	// Go's network poller, which also serves the pipes and timers; each
	// runner instance opens its own.
	{"poller", []uintptr{
		unix.SYS_EPOLL_CREATE1, unix.SYS_EPOLL_CTL, unix.SYS_EPOLL_PWAIT, unix.SYS_EVENTFD2,
	}},
	// The read-only view: the confined filesystem resolves with openat2
	// (RESOLVE_BENEATH) or os.Root (openat, fstatat, readlinkat), lists
	// with getdents64; the runner opens the compile cache. Nothing that
	// creates, renames, removes or changes a file is here.
	{"files in the view", []uintptr{
		unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_NEWFSTATAT,
		unix.SYS_GETDENTS64, unix.SYS_READLINKAT,
	}},
	// Randomness: Go's runtime and crypto/rand where the vDSO's getrandom
	// is unavailable.
	{"randomness", []uintptr{unix.SYS_GETRANDOM}},
}
