package proto

// The tool registry: every call the guest or the gate takes, by name, with
// its argument struct and what the rest of moat needs to know about it,
// said as attributes rather than by naming the tool. The recorder, the
// escape table (host/confine/confinetest), the agent's context budget and
// the guest's handler map read these rows; host/toolspec adds, per
// model-facing row, what a model and a person are shown.
//
// Adding a read-only tool touches its argument struct (and its wire
// fields, wire.go), its handler in guest/tools and its row here, and a
// description in host/toolspec; TestToolTable checks that they agree.

// Attr is a set of a tool's attributes.
type Attr uint

// The attributes of a tool.
const (
	// ReadsFiles: the call reads files' content (read_file, grep).
	ReadsFiles Attr = 1 << iota
	// ListsFolders: the call lists the folder its path names (list_dir).
	ListsFolders
	// WalksTree: the call walks the tree under its path, matching a
	// pattern (grep, glob); with ReadsFiles the pattern is a regular
	// expression over the files' content, without it a glob over their
	// paths.
	WalksTree
	// Describes: the call describes the file its path names (stat).
	Describes
	// PagesByLine: the call's offset argument is the first line of a file
	// the answer shows (read_file), so a cut answer can say where to read
	// on.
	PagesByLine
	// PagesByOffset: the call's offset argument is the first entry of a
	// listing the answer shows (list_dir).
	PagesByOffset
	// Volatile: some lines of the call's answers (or of the review of a
	// write proposal) are where and when the tree is rather than its
	// content; host/toolspec declares which (toolspec.Volatile).
	Volatile
	// Writes: a write proposal, which goes to the approval gate and never
	// to the guest, and is offered only when writes can be approved.
	Writes
	// Internal: a share of a split call (host/fanout), which the guest
	// runs but no model is offered.
	Internal
)

// ToolDef is one row of the registry.
type ToolDef struct {
	// Name is the tool's name, a public contract for models, scripts and
	// MCP clients (see the constants of [Tools]).
	Name string
	// NewArgs returns a pointer to a fresh, zero argument struct: what
	// the guest (or the gate) decodes the call's arguments into, and what
	// host/toolspec derives the JSON Schema from.
	NewArgs func() any
	// Attrs are the tool's attributes.
	Attrs Attr
}

// Is reports whether the tool has every attribute of a.
func (d ToolDef) Is(a Attr) bool { return d.Attrs&a == a }

// Registry is every tool, model-facing ones in the order they are offered,
// then the internal ones. It is built afresh on each call; callers must not
// rely on sharing it.
func Registry() []ToolDef {
	return []ToolDef{
		{ListDir, func() any { return &ListDirArgs{} }, ListsFolders | PagesByOffset | Volatile},
		{ReadFile, func() any { return &ReadFileArgs{} }, ReadsFiles | PagesByLine},
		{Grep, func() any { return &GrepArgs{} }, ReadsFiles | WalksTree},
		{Glob, func() any { return &GlobArgs{} }, WalksTree},
		{Stat, func() any { return &StatArgs{} }, Describes | Volatile},
		{ProposeWrite, func() any { return &ProposeWriteArgs{} }, Writes | Volatile},
		{ProposeEdit, func() any { return &ProposeEditArgs{} }, Writes | Volatile},
		{GrepShard, func() any { return &GrepShardArgs{} }, ReadsFiles | WalksTree | Internal},
		{GlobShard, func() any { return &GlobShardArgs{} }, WalksTree | Internal},
	}
}

// Lookup is the registry's row for the named tool; ok is false for a name
// it does not hold.
func Lookup(name string) (d ToolDef, ok bool) {
	for _, d := range Registry() {
		if d.Name == name {
			return d, true
		}
	}
	return ToolDef{}, false
}

// ToolIs reports whether the named tool exists and has every attribute of
// a.
func ToolIs(name string, a Attr) bool {
	d, ok := Lookup(name)
	return ok && d.Is(a)
}
