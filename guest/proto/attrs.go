package proto

import (
	"encoding/binary"
	"io/fs"
	"time"
)

// The attributes the guest's second host function answers (moat.stat,
// host/runner): what WASI's filestat does not carry (permission bits)
// or that Go's wasip1 port does not pass on (the access, status-change
// and birth times), of a path the host resolves exactly as path_open
// and WASI's path_filestat_get would, a final symlink not followed.
// These are its rules, for the host and for the guest's native
// stand-in (guest/wasifs) alike.

// AttrsSize is the size of the record moat.stat writes: the mode bits
// (u32), which times follow (u32, AttrAccessed | AttrChanged | AttrBorn),
// then the modification, access, status-change and birth times (i64
// nanoseconds since 1970 each), little-endian.
const AttrsSize = 40

// Which times an Attrs holds besides its modification time.
const (
	AttrAccessed uint32 = 1 << iota
	AttrChanged
	AttrBorn
)

// Attrs are a file's permission bits and times as the host sees them.
type Attrs struct {
	// Mode is the Unix permission bits with setuid (04000), setgid
	// (02000) and sticky (01000): 0644 for a file most checkouts make.
	Mode uint32
	// Has says which of Accessed, Changed and Born the host has.
	Has                               uint32
	Modified, Accessed, Changed, Born time.Time
}

// ModeBits is the mode bits of m as Attrs carries them.
func ModeBits(m fs.FileMode) uint32 {
	bits := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		bits |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	return bits
}

// Put writes a into b (at least AttrsSize bytes).
func (a Attrs) Put(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b, a.Mode&0o7777)
	le.PutUint32(b[4:], a.Has&(AttrAccessed|AttrChanged|AttrBorn))
	for i, t := range []time.Time{a.Modified, a.Accessed, a.Changed, a.Born} {
		le.PutUint64(b[8+8*i:], uint64(t.UnixNano()))
	}
}

// ReadAttrs is the Attrs that Put wrote into b (at least AttrsSize bytes).
func ReadAttrs(b []byte) Attrs {
	le := binary.LittleEndian
	at := func(i int) time.Time { return time.Unix(0, int64(le.Uint64(b[8+8*i:]))).UTC() }
	a := Attrs{Mode: le.Uint32(b) & 0o7777, Has: le.Uint32(b[4:]) & (AttrAccessed | AttrChanged | AttrBorn), Modified: at(0)}
	if a.Has&AttrAccessed != 0 {
		a.Accessed = at(1)
	}
	if a.Has&AttrChanged != 0 {
		a.Changed = at(2)
	}
	if a.Has&AttrBorn != 0 {
		a.Born = at(3)
	}
	return a
}
