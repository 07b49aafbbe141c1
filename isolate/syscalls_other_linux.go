//go:build linux && !amd64 && !arm64 && !riscv64

package isolate

// allowedSyscalls is empty where moat has no filter (auditArch is 0 and
// installSeccomp says so): the allow-list is written for amd64, arm64 and
// riscv64, whose generic syscall names it uses.
var allowedSyscalls []syscallGroup
