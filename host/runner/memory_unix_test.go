//go:build unix

package runner

import "testing"

func TestLinearMemoryNeverMoves(t *testing.T) {
	const max = 4 << 20
	m := linearMemory().Allocate(0, max)
	b := m.Reallocate(64 << 10)
	if len(b) != 64<<10 {
		t.Fatalf("len %d", len(b))
	}
	b[len(b)-1] = 7
	g := m.Reallocate(max)
	if len(g) != max || &g[0] != &b[0] || g[len(b)-1] != 7 || g[max-1] != 0 {
		t.Fatal("growing moved, lost or dirtied the memory")
	}
	if m.Reallocate(max+1) != nil {
		t.Fatal("grew past the maximum")
	}
	m.Free()
	if m.Reallocate(1) != nil {
		t.Fatal("usable after Free")
	}
}

func TestCopiedMemoryGrows(t *testing.T) {
	c := &copied{}
	b := c.Reallocate(10)
	b[9] = 1
	if g := c.Reallocate(1000); len(g) != 1000 || g[9] != 1 {
		t.Fatal("copied memory lost its contents")
	}
}
