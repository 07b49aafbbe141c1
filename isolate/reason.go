package isolate

import (
	"errors"
	"io/fs"
	"strings"
)

// Where the kernel says whether unprivileged user namespaces are allowed.
const (
	sysctlAppArmor    = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns" // Ubuntu 23.10+
	sysctlMaxUserNS   = "/proc/sys/user/max_user_namespaces"                     // 0 disables them for everyone
	sysctlUsernsClone = "/proc/sys/kernel/unprivileged_userns_clone"             // Debian's older switch
)

// explain turns a failure to start the child into a reason a person can
// act on, read from the sysctls that commonly cause it. It is pure (the
// files come through readFile) so it is tested on every OS.
func explain(startErr error, euid int, readFile func(string) ([]byte, error)) string {
	val := func(name string) string {
		b, err := readFile(name)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if val(sysctlMaxUserNS) == "0" {
		return "user namespaces are disabled (user.max_user_namespaces=0); sysctl -w user.max_user_namespaces=15000 enables them"
	}
	if euid != 0 && val(sysctlAppArmor) == "1" {
		return "unprivileged user namespaces are blocked (kernel.apparmor_restrict_unprivileged_userns=1); an AppArmor profile granting moat \"userns\", or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, enables them"
	}
	if euid != 0 && val(sysctlUsernsClone) == "0" {
		return "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0); sysctl -w kernel.unprivileged_userns_clone=1 enables them"
	}
	if errors.Is(startErr, fs.ErrPermission) {
		msg := "creating namespaces was refused (" + startErr.Error() + ")"
		if _, err := readFile("/.dockerenv"); err == nil {
			msg += "; this looks like a container whose seccomp profile forbids them: run it with --security-opt seccomp=unconfined or a profile that allows clone with CLONE_NEWUSER"
		} else if _, err := readFile("/run/.containerenv"); err == nil {
			msg += "; this looks like a container whose seccomp profile forbids them: run it with a profile that allows clone with CLONE_NEWUSER"
		}
		return msg
	}
	return startErr.Error()
}
