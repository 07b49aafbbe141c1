package isolate

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSeccompProgramShape(t *testing.T) {
	prog := seccompProgram(unix.AUDIT_ARCH_X86_64, allowedNumbers())
	if len(prog) > 255 {
		t.Fatalf("program of %d instructions: jumps cannot reach its tail", len(prog))
	}
	for i, ins := range prog {
		if ins.Code&0x07 != unix.BPF_JMP {
			continue
		}
		if int(ins.Jt)+i+1 >= len(prog) || int(ins.Jf)+i+1 >= len(prog) {
			t.Errorf("instruction %d jumps past the end", i)
		}
	}
}

// runBPF runs a seccomp program over one system call, as the kernel
// would: the seccomp_data is the architecture, the number and the first
// argument (the program reads no other word). It knows the instructions
// seccompProgram emits and fails the test on any other.
func runBPF(t *testing.T, prog []unix.SockFilter, arch, nr uint32, arg0 uint64) uint32 {
	t.Helper()
	var data [64]byte
	binary.LittleEndian.PutUint32(data[seccompNr:], nr)
	binary.LittleEndian.PutUint32(data[seccompArch:], arch)
	binary.LittleEndian.PutUint64(data[seccompArg0:], arg0)
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		ins := prog[pc]
		switch ins.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[ins.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += int(map[bool]uint8{true: ins.Jt, false: ins.Jf}[acc == ins.K])
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			pc += int(map[bool]uint8{true: ins.Jt, false: ins.Jf}[acc >= ins.K])
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += int(map[bool]uint8{true: ins.Jt, false: ins.Jf}[acc&ins.K != 0])
		case unix.BPF_RET | unix.BPF_K:
			return ins.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, ins.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// TestSeccompProgramDecides runs the filter, for every architecture it is
// built for, over the calls that decide its shape: the allowed ones pass,
// anything else is ENOSYS, clone only for a thread without namespace
// flags, the x32 ABI's aliases are refused, and a foreign architecture is
// killed.
func TestSeccompProgramDecides(t *testing.T) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		kill   = unix.SECCOMP_RET_KILL_PROCESS
	)
	nrs := allowedNumbers()
	if len(nrs) == 0 {
		t.Skip("no allow-list on this architecture")
	}
	for _, nr := range nrs {
		if nr == unix.SYS_CLONE {
			t.Fatal("clone is on the allow-list itself: its flags would go unchecked")
		}
	}
	goThread := uint64(unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_SYSVSEM | unix.CLONE_THREAD)
	for _, arch := range []uint32{unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_RISCV64} {
		prog := seccompProgram(arch, nrs)
		for _, nr := range nrs {
			if got := runBPF(t, prog, arch, uint32(nr), 0); got != allow {
				t.Errorf("arch %#x: allowed call %d answered %#x", arch, nr, got)
			}
		}
		for name, c := range map[string]struct {
			nr   uintptr
			arg0 uint64
			want uint32
		}{
			"open_tree_attr":           {unix.SYS_OPEN_TREE_ATTR, 0, enosys},
			"clone3":                   {unix.SYS_CLONE3, 0, enosys},
			"keyctl":                   {unix.SYS_KEYCTL, 0, enosys},
			"mount":                    {unix.SYS_MOUNT, 0, enosys},
			"socket":                   {unix.SYS_SOCKET, 0, enosys},
			"a number past every call": {1023, 0, enosys},
			"clone a Go thread":        {unix.SYS_CLONE, goThread, allow},
			"clone a process":          {unix.SYS_CLONE, uint64(unix.SIGCHLD), eperm},
			"clone a thread into a new user namespace":   {unix.SYS_CLONE, goThread | unix.CLONE_NEWUSER, eperm},
			"clone a process into a new mount namespace": {unix.SYS_CLONE, unix.CLONE_NEWNS | uint64(unix.SIGCHLD), eperm},
		} {
			if got := runBPF(t, prog, arch, uint32(c.nr), c.arg0); got != c.want {
				t.Errorf("arch %#x: %s answered %#x, want %#x", arch, name, got, c.want)
			}
		}
		if got := runBPF(t, prog, arch^1, unix.SYS_READ, 0); got != kill {
			t.Errorf("arch %#x: a call from another architecture answered %#x, want kill", arch, got)
		}
	}
	prog := seccompProgram(unix.AUDIT_ARCH_X86_64, nrs)
	if got := runBPF(t, prog, unix.AUDIT_ARCH_X86_64, x32SyscallBit|uint32(unix.SYS_READ), 0); got != enosys {
		t.Errorf("x32 read answered %#x, want ENOSYS", got)
	}
}
