package proto

// The tool registry: every call the guest or the gate takes, by name, with
// its argument struct, what a model and a person are shown of it, and what
// the rest of moat needs to know about it, said as attributes rather than
// by naming the tool. The recorder, the escape table
// (host/confine/confinetest), the agent's context budget, the guest's
// handler map, the splitter (host/fanout), the approval gate and the MCP
// server read these rows; host/toolspec derives each model-facing row's
// JSON Schema and validation from them.
//
// Adding a read-only tool touches its argument struct (marked //moat:wire,
// and go generate run for its wire fields), its row here and its handler in guest/tools, and
// nothing else; host/toolspec's TestToolTable checks that they agree.

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
	// Title is the human-readable name MCP clients show ("Read file");
	// Description tells the model what the tool does. An internal call
	// has neither.
	Title, Description string
	// Summary is how the activity line shows a call.
	Summary Summary
	// PathFields are the argument names that hold sandbox paths; each is
	// checked lexically before the call runs (host/toolspec Validate).
	PathFields []string
	// Roots is said to the model after Description when the workspace
	// has several roots (moat --root a --root b): how it names a file
	// then. With one root the description is exactly Description.
	Roots string
	// Shard is the internal tool that runs a share of this call's walk,
	// "" for a call that is not split: host/fanout sends a call with a
	// Shard as several calls of it and merges their answers
	// (guest/tools Merge).
	Shard string
	// Volatile are the lines of its answers that the same tree, copied
	// elsewhere or checked out afresh, answers differently (stat's
	// modified: line); a replay compares them by this declaration.
	Volatile []Volatile
}

// Is reports whether the tool has every attribute of a.
func (d ToolDef) Is(a Attr) bool { return d.Attrs&a == a }

// Registry is every tool, model-facing ones in the order they are offered,
// then the internal ones. It is built afresh on each call; callers must not
// rely on sharing it.
func Registry() []ToolDef {
	aboutPath := Summary{Subject: "path"}
	aboutSearch := Summary{Subject: "pattern", Quote: true, In: "path"}
	paths := []string{"path"}
	// The review of a change to an existing file shows its mode, which
	// a checkout sets from the umask (git keeps only 644 or 755).
	reviewMode := []Volatile{{Prefix: "  action ", Word: "mode ", Review: true, Restored: true}}
	// With several roots the workspace's top folder holds one folder a
	// root (host/confine), named by its label.
	roots := "With several roots, every path starts with its root's name (src/main.go), as list_dir \".\" lists them."
	return []ToolDef{
		{Name: ListDir, NewArgs: func() any { return &ListDirArgs{} }, Attrs: ListsFolders | PagesByOffset,
			Title:       "List folder",
			Description: "List the entries of a folder in the workspace, sorted; folders end with \"/\", symlinks show their target; sizes adds each file's size and each entry's modification time; depth (up to 8) lists the folders inside too, one path a line (sub/name), .gitignored entries left out. Wide folders and trees come in pages: use offset to list on. A path shown in double quotes is passed back exactly as shown, quotes included.",
			PathFields:  paths, Summary: aboutPath,
			Roots: "With several roots, \".\" lists the roots, one folder each, and every path starts with its root's name (src/main.go).",
			// A folder's own time is not kept by a recording, and a
			// checkout sets every time anew.
			Volatile: []Volatile{{Pattern: `\((?:\d+ bytes, )?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)$`}}},
		{Name: ReadFile, NewArgs: func() any { return &ReadFileArgs{} }, Attrs: ReadsFiles | PagesByLine,
			Title:       "Read file",
			Description: "Read a text file in the workspace. Large files come in pages: use offset and limit (in lines) to read on. Binary files are refused.",
			PathFields:  paths, Summary: aboutPath, Roots: roots},
		{Name: Grep, NewArgs: func() any { return &GrepArgs{} }, Attrs: ReadsFiles | WalksTree, Shard: GrepShard,
			Title:       "Search file contents",
			Description: "Search file contents in the workspace with an RE2 regular expression; prints path:line: text per match, or file paths or counts per file (output_mode). Skips binary files (a NUL byte anywhere) and .gitignored files. A path shown in double quotes is passed back exactly as shown, quotes included.",
			PathFields:  paths, Summary: aboutSearch, Roots: roots},
		{Name: Glob, NewArgs: func() any { return &GlobArgs{} }, Attrs: WalksTree, Shard: GlobShard,
			Title:       "Find files by pattern",
			Description: "Find files and folders in the workspace whose paths match a glob pattern (** matches any depth). A path shown in double quotes is passed back exactly as shown, quotes included.",
			PathFields:  paths, Summary: aboutSearch, Roots: roots},
		{Name: Stat, NewArgs: func() any { return &StatArgs{} }, Attrs: Describes,
			Title:       "Describe file",
			Description: "Describe a file or folder in the workspace: kind, size, mode (permission bits), modification time, access and status-change times (and creation time where the host keeps one), symlink target.",
			PathFields:  paths, Summary: aboutPath, Roots: roots,
			// A checkout sets the mode from the umask, as a review's; the
			// access, status-change and creation times no recording can
			// set again.
			Volatile: []Volatile{{Prefix: "modified: ", Restored: true}, {Prefix: "size: ", When: "kind: folder"},
				{Prefix: "mode: ", Restored: true}, {Prefix: "accessed: "}, {Prefix: "changed: "}, {Prefix: "created: "}}},
		{Name: ProposeWrite, NewArgs: func() any { return &ProposeWriteArgs{} }, Attrs: Writes,
			Title:       "Propose writing a file",
			Description: "Propose creating or replacing a file in the workspace. A person sees the diff and must approve it; you are told whether it was written.",
			PathFields:  paths, Summary: aboutPath, Roots: roots, Volatile: reviewMode},
		{Name: ProposeEdit, NewArgs: func() any { return &ProposeEditArgs{} }, Attrs: Writes,
			Title:       "Propose editing a file",
			Description: "Propose replacing exact text in a workspace file. old_text must match exactly once unless replace_all is true. For several replacements in one file, give edits, a list of {old_text, new_text, replace_all?} applied in order (each to the result of the ones before), all or none, instead of old_text and new_text. A person must approve the change.",
			PathFields:  paths, Summary: aboutPath, Roots: roots, Volatile: reviewMode},
		{Name: GrepShard, NewArgs: func() any { return &GrepShardArgs{} }, Attrs: ReadsFiles | WalksTree | Internal},
		{Name: GlobShard, NewArgs: func() any { return &GlobShardArgs{} }, Attrs: WalksTree | Internal},
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

// Summary says which arguments an activity line shows for a call, e.g.
// `→ grep "TODO" in src (340 B)`.
type Summary struct {
	// Subject is the argument that says what the call is about ("path",
	// "pattern"); Quote shows it in double quotes (a pattern, not a path).
	Subject string
	Quote   bool
	// In, when set, is an argument that says where; it is shown as
	// " in X" unless it is empty or ".".
	In string
}

// Volatile is one line of a tool's answer whose value is not the tree's
// content but where and when the tree is: a file's time (a fresh checkout
// or a copy sets it anew), a folder's size (the filesystem's own
// bookkeeping). A replay against a folder (moat replay --root) compares
// such a line only for being there, not its value; a self-contained
// recording (--record-files) restores what it can (Restored) and
// compares that exactly.
type Volatile struct {
	// Prefix starts the line; the rest of it is the value.
	Prefix string
	// When, if set, is a line the answer must also have for this one to
	// be volatile ("kind: folder": a folder's size, not a file's).
	When string
	// Word, if set, is where the value starts inside the line: only the
	// word after it is volatile ("mode " in "..., mode 0644 kept").
	Word string
	// Review: the line is one of the review a person is shown for a write
	// proposal (host/gate), not of the answer.
	Review bool
	// Restored: a self-contained recording keeps the value (each file's
	// time and mode) and its replay restores it.
	Restored bool
	// Pattern, if set, is a regular expression whose first group is a
	// volatile value inside any line of the answer (list_dir's times,
	// which end each line of a listing with sizes); Prefix is then unused.
	Pattern string
}
