package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
)

// oneMemoryPage is a wasm module with one page (64 KiB) of memory and
// nothing else, for calling the host functions on memory a test writes.
var oneMemoryPage = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00, // magic, version 1
	0x05, 0x03, 0x01, 0x00, 0x01, // memory section: one memory, at least 1 page
	0x07, 0x0a, 0x01, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, // export "memory"
}

// TestReadFilesHostCall calls moat.read_files as the guest does, on a
// module's memory: it reads a folder's files into the buffer and writes
// their sizes; it decides nothing (returns 0, writes nothing) for memory
// out of the module's bounds or an instance with no filesystem; it takes
// at most maxReadFilesNames names, and none without its NUL.
func TestReadFilesHostCall(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(root, "d"), 0o755))
	must(os.WriteFile(filepath.Join(root, "d", "a.txt"), []byte("alpha"), 0o644))
	must(os.WriteFile(filepath.Join(root, "d", "b.txt"), []byte("be"), 0o644))
	pol, err := policy.New(nil, nil)
	must(err)
	view, err := confine.New(root, confine.Auto, pol)
	must(err)
	defer view.Close()
	_, ctl := view.Mount()

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, oneMemoryPage)
	must(err)
	mem := mod.Memory()

	const dirAt, namesAt, bufAt, sizesAt = 0, 16, 1024, 4096
	setup := func(names string) {
		mem.Write(0, make([]byte, 8192))
		mem.WriteString(dirAt, "d")
		mem.WriteString(namesAt, names)
	}
	call := func(ctx context.Context, args ...uint32) uint32 {
		stack := make([]uint64, 8)
		for i, a := range args {
			stack[i] = api.EncodeU32(a)
		}
		readFiles(ctx, mod, stack)
		return api.DecodeU32(stack[0])
	}
	sizes := func(n int) []int32 {
		out := make([]int32, n)
		for i := range out {
			v, _ := mem.ReadUint32Le(uint32(sizesAt + 4*i))
			out[i] = int32(v)
		}
		return out
	}
	withFS := WithMount(ctx, ctl)
	names := "a.txt\x00b.txt\x00"

	setup(names)
	if n := call(withFS, dirAt, 1, namesAt, uint32(len(names)), bufAt, 1024, sizesAt, 2); n != 2 || !slices.Equal(sizes(2), []int32{5, 2}) {
		t.Fatalf("decided %d, sizes %v; want 2, [5 2]", n, sizes(2))
	}
	if got, _ := mem.Read(bufAt, 7); string(got) != "alphabe" {
		t.Fatalf("buffer holds %q", got)
	}

	pages := uint32(65536)
	for _, c := range []struct {
		name string
		ctx  context.Context
		args []uint32
	}{
		{"no filesystem", ctx, []uint32{dirAt, 1, namesAt, uint32(len(names)), bufAt, 1024, sizesAt, 2}},
		{"folder out of bounds", withFS, []uint32{pages - 1, 2, namesAt, uint32(len(names)), bufAt, 1024, sizesAt, 2}},
		{"names out of bounds", withFS, []uint32{dirAt, 1, namesAt, pages, bufAt, 1024, sizesAt, 2}},
		{"buffer out of bounds", withFS, []uint32{dirAt, 1, namesAt, uint32(len(names)), bufAt, pages, sizesAt, 2}},
		{"sizes out of bounds", withFS, []uint32{dirAt, 1, namesAt, uint32(len(names)), bufAt, 1024, pages - 4, 2}},
		{"buffer wraps around", withFS, []uint32{dirAt, 1, namesAt, uint32(len(names)), 1 << 31, 1 << 31, sizesAt, 2}},
	} {
		setup(names)
		if n := call(c.ctx, c.args...); n != 0 || !slices.Equal(sizes(2), []int32{0, 0}) {
			t.Errorf("%s: decided %d, sizes %v; want none and nothing written", c.name, n, sizes(2))
		}
	}

	// A count past the bound takes the bound: its sizes must fit in memory.
	setup(names)
	if n := call(withFS, dirAt, 1, namesAt, uint32(len(names)), bufAt, 1024, pages-4*maxReadFilesNames, 1<<30); n != 2 {
		t.Errorf("count 1<<30: decided %d, want the 2 names given", n)
	}
	// The last name has no NUL: it is not one.
	setup("a.txt\x00b.txt")
	if n := call(withFS, dirAt, 1, namesAt, uint32(len("a.txt\x00b.txt")), bufAt, 1024, sizesAt, 2); n != 1 || sizes(1)[0] != 5 {
		t.Errorf("a name without its NUL: decided %d, sizes %v; want only a.txt", n, sizes(2))
	}
}
