package proto

import "syscall"

// sysTimes are the access and status-change times (nanoseconds) of a
// stat (a *syscall.Stat_t), and which it has. Linux's stat carries no
// birth time.
func sysTimes(sys any) (accessed, changed, born int64, has uint32) {
	st, ok := sys.(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, 0
	}
	return st.Atim.Nano(), st.Ctim.Nano(), 0, AttrAccessed | AttrChanged
}
