package isolate

// The probes: what a compromised guest would try, run from inside the
// child under every layer when the doctor or a test asks (probeSpec).

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runProbes tries, from inside the child, what a compromised guest would.
// With Landlock on, it also checks Landlock's claim to hold on every
// thread: see landlockThreads.
func runProbes(p Plan, spec probeSpec, landlockOn bool) []ProbeResult {
	var res []ProbeResult
	add := func(name string, err error, ok string) {
		if err != nil {
			res = append(res, ProbeResult{Name: name, Blocked: true, Detail: errName(err)})
		} else {
			res = append(res, ProbeResult{Name: name, Blocked: false, Detail: ok})
		}
	}
	for _, d := range []string{"/etc", "/home", "/proc", "/dev", "/tmp"} {
		_, err := os.Stat(d)
		add("stat "+d, err, "present")
	}
	if spec.Dial != "" {
		c, err := net.DialTimeout("tcp", spec.Dial, 5*time.Second)
		if err == nil {
			c.Close()
		}
		add("connect "+spec.Dial, err, "connected")
	}
	if spec.HostPID > 0 {
		add(fmt.Sprintf("signal host pid %d", spec.HostPID), unix.Kill(spec.HostPID, 0), "signalled")
	}
	pid := os.Getpid()
	res = append(res, ProbeResult{Name: "own pid", Blocked: pid == 1, Detail: fmt.Sprint(pid)})
	add("write "+InsideRoot, os.WriteFile(filepath.Join(InsideRoot, ".moat-probe"), []byte("x"), 0o600), "written")
	add("mkdir in /", os.Mkdir("/moat-probe", 0o700), "created")
	add("remount "+InsideRoot+" rw", unix.Mount("none", InsideRoot, "", unix.MS_REMOUNT|unix.MS_BIND, ""), "remounted")
	add("unshare mount namespace", unix.Unshare(unix.CLONE_NEWNS), "unshared")
	for _, p := range spec.Read {
		_, err := os.ReadFile(p)
		add("read "+p, err, "read")
	}
	// Outside the seccomp allow-list: keyrings, a mount call newer than
	// the deny-list this replaced (Linux 6.15), and a harmless call that
	// nothing in the child needs.
	add("keyctl read session keyring", keyctlRead(), "read")
	add("add_key to session keyring", addKey(), "added")
	add("request_key", requestKey(), "found")
	add("open_tree_attr /", openTreeAttr(), "cloned")
	_, _, e := unix.Syscall(unix.SYS_GETPPID, 0, 0, 0)
	add("getppid", errnoErr(e), "answered")
	// What the capabilities of a user namespace's root reach: a packet
	// socket (CAP_NET_RAW) and io_uring, both outside the allow-list too.
	add("socket AF_PACKET", packetSocket(), "opened")
	add("io_uring_setup", ioUringSetup(), "set up")
	if landlockOn {
		res = append(res, landlockThreads(probeThreads))
		if abi, _ := LandlockABI(); abi >= 4 {
			// Any address and a fixed port: only Landlock refuses this in
			// the child's network namespace.
			add("bind tcp *:8080", bindTCP(8080), "bound")
		}
	}
	return res
}

// keyctlRead reads the session keyring's list of keys.
func keyctlRead() error {
	_, err := unix.KeyctlBuffer(unix.KEYCTL_READ, unix.KEY_SPEC_SESSION_KEYRING, make([]byte, 64), 0)
	return err
}

// addKey adds a user key to the session keyring.
func addKey() error {
	_, err := unix.AddKey("user", "moat-probe", []byte("x"), unix.KEY_SPEC_SESSION_KEYRING)
	return err
}

// requestKey looks a user key up through every keyring the child has,
// with no callout (so no upcall to a key helper on the host).
func requestKey() error {
	typ, _ := unix.BytePtrFromString("user")
	desc, _ := unix.BytePtrFromString("moat-probe")
	_, _, e := unix.Syscall6(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(typ)), uintptr(unsafe.Pointer(desc)), 0, 0, 0, 0)
	return errnoErr(e)
}

// openTreeAttr clones the view's root as a detached mount, the call the
// old deny-list missed.
func openTreeAttr() error {
	p, err := unix.BytePtrFromString("/")
	if err != nil {
		return err
	}
	cwd := unix.AT_FDCWD
	fd, _, e := unix.Syscall6(unix.SYS_OPEN_TREE_ATTR, uintptr(cwd), uintptr(unsafe.Pointer(p)), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return e
	}
	unix.Close(int(fd))
	return nil
}

// packetSocket opens a raw packet socket, which needs CAP_NET_RAW.
func packetSocket() error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// ioUringSetup sets up an io_uring, whose own calls seccomp cannot see.
func ioUringSetup() error {
	var params [120]byte // struct io_uring_params, zeroed
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		return e
	}
	unix.Close(int(fd))
	return nil
}

func errnoErr(e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

// bindTCP binds a TCP socket to port on every address.
func bindTCP(port int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrInet4{Port: port})
}

// probeThreads is how many threads landlockThreads holds at once: more
// than the child's runtime has started before Landlock (about five), so
// both those and new ones are tried.
const probeThreads = 16

// landlockThreads lists "/" (the child's view root, outside every Landlock
// rule, so only Landlock can refuse it) from n goroutines each locked to
// its own OS thread at the same time. A thread that Landlock did not reach
// would list it.
func landlockThreads(n int) ProbeResult {
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	denied := make([]string, n)
	ready.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-release
			_, err := os.ReadDir("/")
			if err != nil {
				denied[i] = errName(err)
			}
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	count, detail := 0, ""
	for _, d := range denied {
		if d != "" {
			count++
			detail = d
		}
	}
	return ProbeResult{Name: fmt.Sprintf("landlock: list / from %d threads at once", n), Blocked: count == n, Detail: fmt.Sprintf("%s on %d of %d threads", detail, count, n)}
}
