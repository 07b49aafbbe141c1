package proto

import "syscall"

// sysTimes are the access and creation times (nanoseconds) of a file's
// attributes (a *syscall.Win32FileAttributeData), and which it has.
// Windows keeps no status-change time.
func sysTimes(sys any) (accessed, changed, born int64, has uint32) {
	d, ok := sys.(*syscall.Win32FileAttributeData)
	if !ok {
		return 0, 0, 0, 0
	}
	return d.LastAccessTime.Nanoseconds(), 0, d.CreationTime.Nanoseconds(), AttrAccessed | AttrBorn
}
