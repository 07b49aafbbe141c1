package isolate

// The child's session keyring. A process inherits its creator's session
// keyring, and the user's holds whatever their login put there (Kerberos
// tickets, ecryptfs keys, tokens a tool cached with keyctl); the child
// shares the user's uid, so it could read them. The parent's forking
// thread therefore joins a fresh anonymous session keyring before it forks
// the child (spawn), so the child's first thread, and every thread it
// starts, has only that empty one; and keyctl, add_key and request_key
// are not on the seccomp allow-list, so after setup the child cannot reach
// a keyring at all.

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// joinFreshKeyring makes the calling thread's session keyring a new,
// empty, anonymous one (keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)). The
// keyring is per thread: only a thread locked for the purpose may call it.
func joinFreshKeyring() error {
	_, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// sessionKeyringID is the calling thread's session keyring, without
// creating one.
func sessionKeyringID() (int, error) {
	return unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
}

// readKeyring says which session keyring this process has and how many
// keys it holds.
func readKeyring() *keyringState {
	id, err := sessionKeyringID()
	if err != nil {
		return &keyringState{Err: errName(err)}
	}
	// KEYCTL_READ on a keyring answers its key serials, 4 bytes each.
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, nil, 0)
	if err != nil {
		return &keyringState{ID: id, Err: fmt.Sprintf("read: %s", errName(err))}
	}
	return &keyringState{ID: id, Keys: n / 4}
}
