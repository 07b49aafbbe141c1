//go:build darwin || freebsd || netbsd

package proto

import "syscall"

// sysTimes are the access, status-change and birth times (nanoseconds)
// of a stat (a *syscall.Stat_t), and which it has.
func sysTimes(sys any) (accessed, changed, born int64, has uint32) {
	st, ok := sys.(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, 0
	}
	return st.Atimespec.Nano(), st.Ctimespec.Nano(), st.Birthtimespec.Nano(), AttrAccessed | AttrChanged | AttrBorn
}
