// Package wasmpack joins the data segments of a WebAssembly module that
// Go's linker wrote, a step of the guest's build (`make guest`, and
// TestWasmUpToDate, which checks the committed module).
//
// Go's linker leaves runs of zero bytes out of the data section, so the
// guest's 1.1 MB of data came in 44,000 active segments, mostly a few
// dozen bytes apart. wazero keeps a record of every segment for the
// compiled module and another for each instance: 44,000 of each held 5 MB
// of moat's heap with two guests up, and copying the data in at each
// instantiation went segment by segment. [Pack] joins segments that lie
// close together, writing out the zero bytes between them (which linear
// memory holds anyway), so the same memory image comes from a handful of
// segments.
package wasmpack

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// MaxGap is the widest run of zero bytes Pack writes out to join two
// segments. The guest's segments are 17 to 64 bytes apart, except for a
// few gaps of kilobytes and more: at 64 they make eleven segments, for
// 0.8 MB of zeros written out.
const MaxGap = 64

const (
	sectionCustom    = 0
	sectionCode      = 10
	sectionData      = 11
	sectionDataCount = 12
	opI32Const       = 0x41
	opEnd            = 0x0b
	opUnreachable    = 0x00
)

// segment is one active data segment of memory 0.
type segment struct {
	offset uint32
	data   []byte
}

// Pack returns mod with its data segments joined wherever two lie at most
// maxGap bytes apart. Only a module whose segments are all active, for
// memory 0, at constant offsets and disjoint (as Go's linker writes them)
// is rewritten: then the order the segments are applied in does not
// matter, and the memory image is the same. Anything else is an error,
// never a guess. Every other section is copied as it is.
func Pack(mod []byte, maxGap int) ([]byte, error) {
	out := append(make([]byte, 0, len(mod)), mod[:min(8, len(mod))]...) // about the size it was: runs of zeros in, segment headers out
	err := walk(mod, func(id byte, body []byte) error {
		switch id {
		case sectionData:
			segs, err := readData(body)
			if err != nil {
				return err
			}
			if segs, err = join(segs, maxGap); err != nil {
				return err
			}
			body = writeData(segs)
		case sectionDataCount:
			return errors.New("wasmpack: the module has a data count section (bulk memory), which Go's linker does not write")
		}
		out = appendSection(out, id, body)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// walk calls section with the id and body of each section of mod, in
// order. What is not a module, or has sections whose sizes do not add
// up, is an error.
func walk(mod []byte, section func(id byte, body []byte) error) error {
	if len(mod) < 8 || !bytes.Equal(mod[:4], []byte("\x00asm")) {
		return errors.New("wasmpack: not a WebAssembly module")
	}
	for at := 8; at < len(mod); {
		id := mod[at]
		size, n := binary.Uvarint(mod[at+1:])
		if n <= 0 || uint64(len(mod)-at-1-n) < size {
			return fmt.Errorf("wasmpack: section %d at %d: bad size", id, at)
		}
		if err := section(id, mod[at+1+n:at+1+n+int(size)]); err != nil {
			return err
		}
		at += 1 + n + int(size)
	}
	return nil
}

// readData decodes a data section of active segments for memory 0 with
// i32.const offsets.
func readData(b []byte) ([]segment, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("wasmpack: bad data section")
	}
	b = b[n:]
	segs := make([]segment, 0, count)
	for i := uint64(0); i < count; i++ {
		if len(b) < 2 || b[0] != 0 || b[1] != opI32Const {
			return nil, fmt.Errorf("wasmpack: data segment %d is not an active segment of memory 0 at a constant offset", i)
		}
		off, n := sleb32(b[2:])
		if n <= 0 || len(b) < 2+n+1 || b[2+n] != opEnd {
			return nil, fmt.Errorf("wasmpack: data segment %d: bad offset", i)
		}
		b = b[2+n+1:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return nil, fmt.Errorf("wasmpack: data segment %d: bad size", i)
		}
		segs = append(segs, segment{offset: uint32(off), data: b[n : n+int(size) : n+int(size)]}) // capped: join appends to a copy
		b = b[n+int(size):]
	}
	if len(b) != 0 {
		return nil, errors.New("wasmpack: bytes after the last data segment")
	}
	return segs, nil
}

// join sorts the segments by offset and joins those at most maxGap bytes
// apart. Overlapping segments are an error: the order they are applied
// in would matter.
func join(segs []segment, maxGap int) ([]segment, error) {
	sorted := slices.Clone(segs)
	slices.SortStableFunc(sorted, func(a, b segment) int { return cmp.Compare(a.offset, b.offset) })
	var out []segment
	for _, s := range sorted {
		if k := len(out) - 1; k >= 0 {
			end := uint64(out[k].offset) + uint64(len(out[k].data))
			if uint64(s.offset) < end {
				return nil, fmt.Errorf("wasmpack: data segments at %d and %d overlap", out[k].offset, s.offset)
			}
			if gap := uint64(s.offset) - end; gap <= uint64(maxGap) {
				// readData caps each segment's bytes, so this append
				// copies them rather than write over the module.
				d := append(out[k].data, make([]byte, gap)...)
				out[k].data = append(d, s.data...)
				continue
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// writeData encodes a data section of active segments for memory 0.
func writeData(segs []segment) []byte {
	b := binary.AppendUvarint(nil, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, opI32Const)
		b = appendSleb32(b, int32(s.offset))
		b = append(b, opEnd)
		b = binary.AppendUvarint(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

// sleb32 decodes a signed LEB128 i32, returning the bytes read (0 or less
// when b holds none).
func sleb32(b []byte) (int32, int) {
	var r int64
	var shift uint
	for i, c := range b {
		if i >= 5 {
			return 0, -1
		}
		r |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				r |= -1 << shift
			}
			return int32(r), i + 1
		}
	}
	return 0, 0
}

func appendSleb32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if x == 0 && c&0x40 == 0 || x == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// StubName is the name of the custom section [Stub] adds.
const StubName = "moat.code"

// Stub returns mod with every function body replaced by `unreachable`,
// and a custom section, [StubName], holding the SHA-256 of the code
// section it replaced. Every other section is copied as it is. The stub
// is the module in everything but its code (the same types, imports,
// functions, memory, data and exports), so code compiled from mod serves
// it; and since its bytes hold the code's hash, no two modules with
// different code have the same stub. host/runner caches the guest's
// compiled code under the stub's name, which wazero decodes and validates
// in a fraction of the time the whole module takes.
func Stub(mod []byte) ([]byte, error) {
	// The stub's size first, so that it is built in one allocation (a
	// one-shot call's every byte of garbage is resident at its peak).
	size, count, n := 8, uint64(0), 0
	err := walk(mod, func(id byte, body []byte) error {
		if id != sectionCode {
			size += 1 + binary.MaxVarintLen32 + len(body)
			return nil
		}
		if count != 0 || n != 0 {
			return errors.New("wasmpack: two code sections")
		}
		count, n = binary.Uvarint(body)
		if n <= 0 || count > uint64(len(body)) { // every body takes a byte at least
			return errors.New("wasmpack: bad code section")
		}
		size += 2*(1+binary.MaxVarintLen32) + len(StubName) + 1 + sha256.Size + n + 4*int(count)
		return nil
	})
	if err == nil && n == 0 {
		err = errors.New("wasmpack: the module has no code section")
	}
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, size), mod[:8]...)
	walk(mod, func(id byte, body []byte) error {
		if id != sectionCode {
			out = appendSection(out, id, body)
			return nil
		}
		sum := sha256.Sum256(body)
		custom := binary.AppendUvarint(nil, uint64(len(StubName)))
		out = appendSection(out, sectionCustom, append(append(custom, StubName...), sum[:]...))
		// Each body: its size (3), no locals, unreachable, end.
		stubs := binary.AppendUvarint(make([]byte, 0, n+4*int(count)), count)
		for range count {
			stubs = append(stubs, 3, 0, opUnreachable, opEnd)
		}
		out = appendSection(out, id, stubs)
		return nil
	})
	return out, nil
}

// appendSection appends the section id with body to b.
func appendSection(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}
