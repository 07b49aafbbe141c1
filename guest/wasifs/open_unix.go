//go:build unix

package wasifs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/moatdev/moat/guest/proto"
)

// openRoot: natively Open goes through syscall.Open by path.
func openRoot(string) int { return -1 }

// wasiName is name itself: natively a path is bytes.
func wasiName(name string) string { return name }

func (f *FS) open(name string) (int, error) {
	return syscall.Open(full(f.root, name), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
}

// closeDir: natively a listing holds no buffer of its own.
func (f *FS) closeDir(*file) {}

// readDir lists the open folder natively through os.File.ReadDir, sorted
// by name with each name read once, without the files skipFile (may be
// nil) rules out.
func (f *FS) readDir(d *file, name string, skipFile func(string) bool) ([]fs.DirEntry, error) {
	list, err := d.ReadDir(-1)
	list = skipFiles(list, skipFile)
	if err != nil {
		// os's error names the full path from the preopen; fs.ReadDir's
		// names the path asked for.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
		}
	}
	type named struct {
		name string
		e    fs.DirEntry
	}
	ents := make([]named, len(list))
	for i, e := range list {
		ents[i] = named{e.Name(), e}
	}
	slices.SortFunc(ents, func(x, y named) int { return strings.Compare(x.name, y.name) })
	for i, e := range ents {
		list[i] = e.e
	}
	return list, err
}

// scanDir is ScanDir natively: os.File.ReadDir in batches.
func (f *FS) scanDir(d *file, name string, fn func(string, fs.FileMode)) error {
	for {
		batch, err := d.ReadDir(1024)
		for _, e := range batch {
			fn(e.Name(), e.Type())
		}
		if errors.Is(err, io.EOF) || err == nil && len(batch) == 0 {
			return nil
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
			}
			return err
		}
	}
}

// readDirN is os.File.ReadDir natively.
func (f *FS) readDirN(d *file, n int) ([]fs.DirEntry, error) {
	o, err := d.osFile()
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: d.name, Err: err}
	}
	return o.ReadDir(n)
}

// dirReader is the guest's (open_wasip1.go); natively os.File reads.
type dirReader struct{}

// readDirAll lists the open folder natively in its own order, leaving out
// the files skipFile (may be nil) rules out.
func (f *FS) readDirAll(d *file, skipFile func(string) bool) ([]fs.DirEntry, error) {
	list, err := d.ReadDir(-1)
	return skipFiles(list, skipFile), err
}

// skipFiles leaves out of list the files skipFile (may be nil) rules out.
func skipFiles(list []fs.DirEntry, skipFile func(string) bool) []fs.DirEntry {
	if skipFile == nil {
		return list
	}
	kept := list[:0]
	for _, e := range list {
		if e.IsDir() || e.Type()&fs.ModeIrregular != 0 || !skipFile(e.Name()) {
			kept = append(kept, e)
		}
	}
	return kept
}

// walkStop is WalkStop natively: no host posts a stop.
func (f *FS) walkStop(proto.Progress) string { return "" }

// claimUnit is ClaimUnit natively: no host deals the units.
func (f *FS) claimUnit(string) (mine, ok bool) { return false, false }

// readFiles is ReadFiles natively, each file opened and read in turn with
// os, to the same rules as the host's moat.read_files.
func (f *FS) readFiles(dir string, names []string, buf []byte, sizes []int32) int {
	names = names[:min(len(names), len(sizes))]
	at := 0
	for i, nm := range names {
		sizes[i] = proto.NotRead
		if !proto.EntryName(nm) {
			continue
		}
		o, err := os.OpenFile(full(f.root, joinName(dir, nm)), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		fi, err := o.Stat()
		switch {
		case err != nil || !fi.Mode().IsRegular():
		case fi.Size() >= int64(len(buf)-at):
			if at > 0 {
				o.Close()
				return i
			}
		default:
			if n, err := proto.ReadWhole(o, buf[at:]); err == nil {
				sizes[i] = int32(n)
				at += n
			}
		}
		o.Close()
	}
	return len(names)
}

// attrs is Attrs natively: os.Lstat, to the same rules as the host's
// moat.stat (proto.AttrsOf).
func (f *FS) attrs(name string) (proto.Attrs, error) {
	fi, err := os.Lstat(full(f.root, name))
	if err != nil {
		return proto.Attrs{}, errNotDescribed
	}
	return proto.AttrsOf(fi), nil
}
