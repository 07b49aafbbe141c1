package proto

import "testing"

// TestRegistry holds the registry's rows to what its readers assume: one
// row a name, every model-facing read-only tool saying what it does to
// the tree (the escape table asks each tool by it), one model-facing tool
// paging a file by line (the agent's budget names it in its note), and
// every model-facing tool described.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	byLine := 0
	for _, d := range Registry() {
		if seen[d.Name] {
			t.Errorf("%s: two rows", d.Name)
		}
		seen[d.Name] = true
		if d.NewArgs == nil || d.NewArgs() == nil {
			t.Errorf("%s: no argument struct", d.Name)
		}
		if _, ok := Lookup(d.Name); !ok || !ToolIs(d.Name, d.Attrs) {
			t.Errorf("%s: Lookup or ToolIs does not find it", d.Name)
		}
		if d.Is(Internal) {
			continue
		}
		if d.Title == "" || d.Description == "" || d.Summary.Subject == "" {
			t.Errorf("%s: a model-facing tool with no title, description or summary", d.Name)
		}
		what := d.Attrs & (ReadsFiles | ListsFolders | WalksTree | Describes)
		if d.Is(Writes) != (what == 0) {
			t.Errorf("%s: write %v, but what it does to the tree is %b", d.Name, d.Is(Writes), what)
		}
		if d.Is(PagesByLine) {
			byLine++
		}
	}
	if byLine != 1 {
		t.Errorf("%d model-facing tools page a file by line, want 1", byLine)
	}
	if ToolIs("nope", 0) {
		t.Error("ToolIs found a tool that is not there")
	}
}

// A split tool's Shard is an internal row that does to the tree what the
// tool does (host/fanout sends the call as calls of it), and every
// internal row is some tool's Shard.
func TestRegistryShards(t *testing.T) {
	sharded := map[string]bool{}
	for _, d := range Registry() {
		if d.Shard == "" {
			continue
		}
		s, ok := Lookup(d.Shard)
		if !ok || !s.Is(Internal) || s.Attrs&^Internal != d.Attrs {
			t.Errorf("%s: its shard %s is not an internal row with its attributes (%b, %b)", d.Name, d.Shard, d.Attrs, s.Attrs)
		}
		sharded[d.Shard] = true
	}
	for _, d := range Registry() {
		if d.Is(Internal) && !sharded[d.Name] {
			t.Errorf("%s: an internal row no tool has as its Shard", d.Name)
		}
	}
}
