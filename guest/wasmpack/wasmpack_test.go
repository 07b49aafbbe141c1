package wasmpack

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/moatdev/moat/guest"
)

// TestPackKeepsTheImage: a module whose data comes in thousands of
// segments, as Go's linker writes it (here the committed guest, split
// again at its runs of zeros), packs into a handful that put exactly the
// same bytes in linear memory, and every other section is unchanged.
func TestPackKeepsTheImage(t *testing.T) {
	mod := fragment(t, guest.Wasm())
	packed, err := Pack(mod, MaxGap)
	if err != nil {
		t.Fatal(err)
	}
	before, after := sections(t, mod), sections(t, packed)
	if len(before) != len(after) {
		t.Fatalf("%d sections, was %d", len(after), len(before))
	}
	for i := range before {
		if before[i].id != after[i].id || before[i].id != sectionData && !bytes.Equal(before[i].body, after[i].body) {
			t.Fatalf("section %d (id %d) changed", i, before[i].id)
		}
		if before[i].id != sectionData {
			continue
		}
		was, err := readData(before[i].body)
		if err != nil {
			t.Fatal(err)
		}
		now, err := readData(after[i].body)
		if err != nil {
			t.Fatal(err)
		}
		if len(was) < 1000 || len(now) > 64 {
			t.Errorf("%d segments packed into %d", len(was), len(now))
		}
		if a, b := image(was), image(now); !bytes.Equal(a, b) {
			t.Errorf("the memory image differs (%d bytes, was %d)", len(b), len(a))
		}
	}
	// Packing again changes nothing.
	again, err := Pack(packed, MaxGap)
	if err != nil || !bytes.Equal(again, packed) {
		t.Errorf("packing a packed module changed it (err %v)", err)
	}
}

// fragment splits mod's data segments at every run of 17 or more zero
// bytes, leaving the zeros out, as Go's linker does, in reverse order of
// offset (Pack must not depend on the order).
func fragment(t *testing.T, mod []byte) []byte {
	var out []byte
	out = append(out, mod[:8]...)
	for _, sec := range sections(t, mod) {
		body := sec.body
		if sec.id == sectionData {
			segs, err := readData(body)
			if err != nil {
				t.Fatal(err)
			}
			var split []segment
			for _, s := range segs {
				d := s.data
				for i := 0; i < len(d); {
					for i < len(d) && d[i] == 0 {
						i++ // zeros at the start, or a long run: left out
					}
					if i == len(d) {
						break
					}
					start := i
					for i < len(d) {
						if d[i] != 0 {
							i++
							continue
						}
						z := i
						for z < len(d) && d[z] == 0 {
							z++
						}
						if z-i >= 17 || z == len(d) {
							break
						}
						i = z
					}
					split = append(split, segment{s.offset + uint32(start), d[start:i:i]})
				}
			}
			a, b := image(segs), image(split)
			b = append(b, make([]byte, max(0, len(a)-len(b)))...) // trailing zeros left out
			if !bytes.Equal(a, b) {
				t.Fatal("fragment changed the memory image")
			}
			slices.Reverse(split)
			body = writeData(split)
		}
		out = append(out, sec.id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	return out
}

// TestPackRefuses: what is not a module of active, disjoint segments is
// an error, not rewritten.
func TestPackRefuses(t *testing.T) {
	seg := func(off int32, data string) []byte {
		b := appendSleb32([]byte{0, opI32Const}, off)
		b = append(b, opEnd)
		b = binary.AppendUvarint(b, uint64(len(data)))
		return append(b, data...)
	}
	module := func(segs ...[]byte) []byte {
		body := binary.AppendUvarint(nil, uint64(len(segs)))
		for _, s := range segs {
			body = append(body, s...)
		}
		m := append([]byte("\x00asm\x01\x00\x00\x00"), sectionData)
		m = binary.AppendUvarint(m, uint64(len(body)))
		return append(m, body...)
	}
	if _, err := Pack(module(seg(10, "abc"), seg(12, "xyz")), MaxGap); err == nil {
		t.Error("overlapping segments were packed")
	}
	passive := module([]byte{1, 3, 'a', 'b', 'c'}, seg(0, "a")) // flags 1: a passive segment of 3 bytes
	if _, err := Pack(passive, MaxGap); err == nil {
		t.Error("a passive segment was packed")
	}
	if _, err := Pack([]byte("not wasm"), MaxGap); err == nil {
		t.Error("not a module, packed")
	}
	got, err := Pack(module(seg(100, "ab"), seg(10, "xy"), seg(14, "z")), MaxGap)
	if err != nil {
		t.Fatal(err)
	}
	if want := module(seg(10, "xy\x00\x00z"), seg(100, "ab")); !bytes.Equal(got, want) {
		t.Errorf("packed to %q, want %q", got, want)
	}
}

type section struct {
	id   byte
	body []byte
}

func sections(t *testing.T, mod []byte) []section {
	var out []section
	for at := 8; at < len(mod); {
		size, n := binary.Uvarint(mod[at+1:])
		if n <= 0 {
			t.Fatalf("bad section at %d", at)
		}
		out = append(out, section{mod[at], mod[at+1+n : at+1+n+int(size)]})
		at += 1 + n + int(size)
	}
	return out
}

// image is linear memory after the segments are applied, up to their end.
func image(segs []segment) []byte {
	var mem []byte
	for _, s := range segs {
		if end := int(s.offset) + len(s.data); end > len(mem) {
			mem = append(mem, make([]byte, end-len(mem))...)
		}
		copy(mem[s.offset:], s.data)
	}
	return mem
}

// TestStub: the stub of the guest is the guest in every section but its
// code, whose bodies are each `unreachable`, one for one; a custom
// section names the code replaced by its hash, so a module that differs
// only in one function's body has another stub; wazero takes the stub as
// a valid module; and what is not a module with code is refused.
func TestStub(t *testing.T) {
	mod := guest.Wasm()
	stub, err := Stub(mod)
	if err != nil {
		t.Fatal(err)
	}
	before, after := sections(t, mod), sections(t, stub)
	var code []byte
	j := 0
	for _, s := range before {
		if s.id == sectionCode {
			code = s.body
			named := after[j]
			if named.id != sectionCustom || !bytes.HasPrefix(named.body, append([]byte{byte(len(StubName))}, StubName...)) {
				t.Fatalf("section %d of the stub is not %s", j, StubName)
			}
			if sum := sha256.Sum256(code); !bytes.Equal(named.body[1+len(StubName):], sum[:]) {
				t.Fatal("the stub's custom section does not hold the hash of the code")
			}
			j++
			count, _ := binary.Uvarint(code)
			stubCount, m := binary.Uvarint(after[j].body)
			if after[j].id != sectionCode || stubCount != count {
				t.Fatalf("the stub's code section has %d bodies, the module %d", stubCount, count)
			}
			if !bytes.Equal(after[j].body[m:], bytes.Repeat([]byte{3, 0, opUnreachable, opEnd}, int(count))) {
				t.Fatal("the stub's bodies are not each `unreachable`")
			}
		} else if after[j].id != s.id || !bytes.Equal(after[j].body, s.body) {
			t.Fatalf("section %d (id %d) of the stub differs from the module's", j, s.id)
		}
		j++
	}
	if j != len(after) {
		t.Fatalf("the stub has %d sections, want %d", len(after), j)
	}

	// One body changed (the first, to `unreachable`, valid whatever its
	// type): another stub.
	count, n := binary.Uvarint(code)
	size, m := binary.Uvarint(code[n:])
	other := binary.AppendUvarint(nil, count)
	other = append(other, 3, 0, opUnreachable, opEnd)
	other = append(other, code[n+m+int(size):]...)
	var changed []byte
	changed = append(changed, mod[:8]...)
	for _, s := range before {
		body := s.body
		if s.id == sectionCode {
			body = other
		}
		changed = appendSection(changed, s.id, body)
	}
	otherStub, err := Stub(changed)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(otherStub, stub) {
		t.Fatal("two modules that differ in one body have the same stub")
	}

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, stub); err != nil {
		t.Fatalf("wazero refuses the stub: %v", err)
	}

	for _, bad := range [][]byte{[]byte("not wasm"), []byte("\x00asm\x01\x00\x00\x00"), appendSection([]byte("\x00asm\x01\x00\x00\x00"), sectionCode, []byte{5})} {
		if _, err := Stub(bad); err == nil {
			t.Errorf("Stub(%q) made a stub", bad)
		}
	}
}
