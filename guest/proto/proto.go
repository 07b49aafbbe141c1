// Package proto is the wire format between the moat host and the WASI tool
// guest, and the one definition of every tool's arguments.
//
// The argument structs below are the single schema source: the host derives
// each tool's JSON Schema from them (host/toolspec), validates the model's
// arguments against it, and sends the validated arguments to the guest, which
// decodes them into the same structs. Ollama, the OpenAI-compatible API and
// MCP are all offered the schema derived here.
//
// The framing is one JSON object per line: the host writes a [Request] on the
// guest's stdin, the guest answers with exactly one [Response] on its stdout.
// The host encodes and decodes with encoding/json; the guest with the small
// codec in wire.go ([DecodeRequest], [DecodeArgs], [AppendResponse]), which
// keeps reflection out of the guest and is tested to agree with
// encoding/json. A grep or glob split over several instances travels as
// [GrepShard] or [GlobShard] calls, whose answers the host merges; no other
// call carries anything of it.
//
// # Errors of the filesystem
//
// The guest's filesystem speaks to it through errno values, which are part
// of this contract too: host/confine returns them, wazero passes them on as
// WASI errnos, guest/tools turns each into the message the model reads. This
// is their one description; the constants below are what both sides use.
//
//   - [ErrnoEscape] (EPERM): the path leaves the sandbox root, through a
//     symlink or "..". wazero has no EXDEV, the natural errno for it.
//   - [ErrnoDenied] (EACCES): the deny-list refused a component of the path
//     or of a symlink's target. An error the mount cannot name is reported
//     as EACCES too: refused, never passed on as something else.
//   - [ErrnoOSDenied] (ENOTSOCK): the operating system refused the access
//     (EACCES or EPERM from the host's file system: a file's mode or owner,
//     a security module), not the sandbox's policy. wazero's errnos have no
//     second permission error, so one no file operation returns is
//     borrowed: the guest has no sockets.
//   - [ErrnoLoop] (ELOOP): too many symlinks in one resolution.
//   - [ErrnoSpecial] (ENOTSUP): a FIFO, socket or device, which is never
//     opened.
//   - [ErrnoChanged] (EAGAIN): the path was swapped between its check and
//     its open (a rename or a re-pointed symlink); it was not read.
//   - [ErrnoRevoked] (EIO): every operation of an instance that overran its
//     deadline, once host/runner has revoked its mount.
//
// ENOENT, ENOTDIR and EISDIR keep their usual meaning.
//
// This package is compiled into the guest (GOOS=wasip1) and must stay free of
// host-only imports.
package proto

import (
	"encoding/json"
	"syscall"
)

// The errnos of the confined filesystem (see "Errors of the filesystem"
// above). Each side compiles them for its own platform (the host's Linux or
// macOS numbers, the guest's WASI ones); wazero maps one to the other.
const (
	ErrnoEscape   = syscall.EPERM
	ErrnoDenied   = syscall.EACCES
	ErrnoOSDenied = syscall.ENOTSOCK
	ErrnoLoop     = syscall.ELOOP
	ErrnoSpecial  = syscall.ENOTSUP
	ErrnoChanged  = syscall.EAGAIN
	ErrnoRevoked  = syscall.EIO
)

// Request is one tool call, already validated by the host.
type Request struct {
	ID     uint64          `json:"id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Limits Limits          `json:"limits"`
}

// Limits bound the work and output of one call. Zero values mean the
// defaults below.
//
//moat:wire
type Limits struct {
	// MaxReadBytes caps how much of a file read_file returns in one call.
	MaxReadBytes int64 `json:"max_read_bytes,omitempty"`
	// MaxResults caps grep hits, glob matches and list_dir entries.
	MaxResults int `json:"max_results,omitempty"`
	// NoIgnore makes grep and glob include files ignored by .gitignore.
	NoIgnore bool `json:"no_ignore,omitempty"`
	// TimeLimit is how long the guest may work on this call, in
	// nanoseconds, counted from when it reads the request (the host sets
	// it from the call's deadline). The guest's walks (and grep, between
	// pieces of a file) look at a monotonic clock and stop with a note
	// before it runs out, so that an abandoned guest does not keep
	// computing. A relative time, not a wall-clock deadline: the guest's
	// wall clock is fake (wazero's default), only its monotonic clock is
	// real. Zero means no limit.
	TimeLimit int64 `json:"time_limit_ns,omitempty"`
}

// Defaults for [Limits].
const (
	DefaultMaxReadBytes = 256 << 10 // 256 KiB: a large file page, small next to a local model's window
	DefaultMaxResults   = 100       // grep hits / glob matches / list_dir entries
	MaxLineBytes        = 512       // grep prints at most this much of a matching line
	// MaxMaxResults is the most max_results may ask for: past it an answer
	// is too long for a model to use, and holding it cost guest memory.
	MaxMaxResults = 2000
	// MaxGrepBytes caps one grep answer whatever max_results says: 2000
	// lines of MaxLineBytes would be 1 MB.
	MaxGrepBytes = 128 << 10
	// MaxContext is the most context lines grep shows on either side of a hit.
	MaxContext = 50
	// MaxEdits is the most edits one propose_edit may list: more is not a
	// change a person reviews in one go, and each edit scans the file.
	MaxEdits = 100
	// MaxListDepth is the most levels one list_dir may list: a tree view
	// of a project's layout, not a walk of everything (glob's job).
	MaxListDepth = 8
)

// Grep output modes (GrepArgs.OutputMode).
const (
	GrepContent = "content"            // matching lines, "path:LINE: text" (the default)
	GrepFiles   = "files_with_matches" // one path per file with a match, like rg -l
	GrepCount   = "count"              // "path:N" per file, N matching lines, like rg -c
)

// Bounds returns what the jsonschema tag cannot say about an argument of a
// tool: its largest value, or for a list its most items (0: none beyond the
// host's default), and its allowed values (nil: any). The host puts them in
// the schema, so the model sees them and the host rejects what breaks them.
func Bounds(tool, arg string) (maximum int, enum []string) {
	if tool == ProposeEdit && arg == "edits" {
		return MaxEdits, nil
	}
	if tool == ListDir && arg == "depth" {
		return MaxListDepth, nil
	}
	if tool != Grep {
		return 0, nil
	}
	switch arg {
	case "max_results":
		return MaxMaxResults, nil
	case "context", "before_context", "after_context":
		return MaxContext, nil
	case "output_mode":
		return 0, []string{GrepContent, GrepFiles, GrepCount}
	}
	return 0, nil
}

// Response is the guest's answer to one Request. Text is exactly what the
// model receives; IsError marks a failed call (the text says why).
type Response struct {
	ID      uint64 `json:"id"`
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	// Shard is a successful grep_shard or glob_shard answer (Text empty):
	// its JSON ([GrepShardResult], [GlobShardResult]) as it is, not as a
	// string holding JSON, which cost the guest a second escaping of every
	// hit and the host a second unquoting ([ShardJSON] reads either).
	Shard json.RawMessage `json:"shard,omitempty"`
}

// ShardJSON is the JSON of a shard call's answer r: its Shard, or its Text
// when Shard is empty.
func ShardJSON(r Response) []byte {
	if len(r.Shard) > 0 {
		return r.Shard
	}
	return []byte(r.Text)
}

// Tool names. These are a public contract: models, scripts and MCP clients
// call them by these names. Each has its row in [Registry], which is what
// the rest of moat reads.
const (
	ListDir      = "list_dir"
	ReadFile     = "read_file"
	Grep         = "grep"
	Glob         = "glob"
	Stat         = "stat"
	ProposeWrite = "propose_write"
	ProposeEdit  = "propose_edit"
)

// Tools lists every tool a model can call, in the order they are offered:
// the registry's rows that are not [Internal].
func Tools() []string {
	var names []string
	for _, d := range Registry() {
		if !d.Is(Internal) {
			names = append(names, d.Name)
		}
	}
	return names
}

// ListDirArgs are the arguments of list_dir.
//
//moat:wire
type ListDirArgs struct {
	Path   string `json:"path" jsonschema:"folder to list, relative to the workspace root; \".\" is the root"`
	Offset int    `json:"offset,omitempty" jsonschema:"first entry to list, counting from 1 in name order (default 1); a folder longer than one page says the offset of the next"`
	Sizes  bool   `json:"sizes,omitempty" jsonschema:"also show each file's size and each entry's modification time (default false)"`
	Depth  int    `json:"depth,omitempty" jsonschema:"how many levels to list (default 1, the folder's own entries; at most 8): from 2 on, each line is a path under the folder (sub/name) and .gitignored entries are left out, as grep and glob leave them"`
}

// ReadFileArgs are the arguments of read_file.
//
//moat:wire
type ReadFileArgs struct {
	Path   string `json:"path" jsonschema:"file to read, relative to the workspace root"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to return, counting from 1 (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to return (default: as many as fit the byte budget)"`
}

// GrepArgs are the arguments of grep.
//
//moat:wire
type GrepArgs struct {
	Pattern       string `json:"pattern" jsonschema:"RE2 regular expression to search for; \\w \\d \\b are ASCII-only, use \\p{L} for letters and \\p{Nd} for digits of any script"`
	Path          string `json:"path,omitempty" jsonschema:"file or folder to search, relative to the workspace root (default \".\")"`
	Glob          string `json:"glob,omitempty" jsonschema:"only search files whose path matches this glob, e.g. \"**/*.go\""`
	IgnoreCase    bool   `json:"ignore_case,omitempty" jsonschema:"match case-insensitively"`
	MaxResults    int    `json:"max_results,omitempty" jsonschema:"stop after this many matching lines, or files in the other modes (default 100)"`
	OutputMode    string `json:"output_mode,omitempty" jsonschema:"content: matching lines (default); files_with_matches: file paths only; count: matching lines per file"`
	Context       int    `json:"context,omitempty" jsonschema:"lines of context to show before and after each matching line"`
	BeforeContext int    `json:"before_context,omitempty" jsonschema:"lines of context before each matching line (overrides context)" wire:"set=BeforeGiven"`
	AfterContext  int    `json:"after_context,omitempty" jsonschema:"lines of context after each matching line (overrides context)" wire:"set=AfterGiven"`
	// BeforeGiven and AfterGiven say the arguments named before_context
	// and after_context (the guest's decoder sets them), so that an
	// explicit 0 overrides context as ripgrep's -B0 and -A0 override -C.
	BeforeGiven bool `json:"-"`
	AfterGiven  bool `json:"-"`
}

// GlobArgs are the arguments of glob.
//
//moat:wire
type GlobArgs struct {
	Pattern string `json:"pattern" jsonschema:"glob pattern with ** for any depth, e.g. \"src/**/*.ts\""`
	Path    string `json:"path,omitempty" jsonschema:"folder to match under, relative to the workspace root (default \".\")"`
}

// StatArgs are the arguments of stat.
//
//moat:wire
type StatArgs struct {
	Path string `json:"path" jsonschema:"file or folder to describe, relative to the workspace root"`
}

// ProposeWriteArgs are the arguments of propose_write. The write happens
// only after a person approves it; the guest never sees these.
type ProposeWriteArgs struct {
	Path    string `json:"path" jsonschema:"file to create or replace, relative to the workspace root"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

// ProposeEditArgs are the arguments of propose_edit: one replacement
// (old_text, new_text, replace_all), or several in Edits, never both. The
// single-edit fields are optional in the schema only so that Edits can
// stand alone; the gate requires one form or the other.
type ProposeEditArgs struct {
	Path       string `json:"path" jsonschema:"file to edit, relative to the workspace root"`
	OldText    string `json:"old_text,omitempty" jsonschema:"exact text to replace; must occur exactly once unless replace_all is true (for several replacements use edits instead)"`
	NewText    string `json:"new_text,omitempty" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_text"`
	Edits      []Edit `json:"edits,omitempty" jsonschema:"several replacements in one proposal, instead of old_text and new_text: applied in order, each to the result of the ones before, all or none"`
}

// Edit is one replacement of propose_edit's edits.
type Edit struct {
	OldText    string `json:"old_text" jsonschema:"exact text to replace; must occur exactly once unless replace_all is true"`
	NewText    string `json:"new_text" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_text"`
}

// GrepShard is one share of a grep split over several guest instances
// (host/fanout): the guest walks the whole tree but searches only its share
// of the files, and answers with the hits of each file for the host to merge
// (tools.MergeGrep) into exactly the answer one instance gives. It is not a
// model's tool: no model is offered it, and the host validates a model's
// call against its catalogue before anything reaches the guest.
const GrepShard = "grep_shard"

// GrepShardArgs are the arguments of grep_shard: a grep's, and which share
// of the files to search, Shard of Shards.
//
//moat:wire
type GrepShardArgs struct {
	GrepArgs
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// Weights are what the host knows of the work in the folders below
	// the grep's path (tools.Balance, from the Weights of the greps
	// before): the shards deal the folders out by it, so that each
	// share's work is about even at every point of the walk, and deal a
	// heavy folder out finely (its files by their hash, its folders as
	// units) rather than whole to one. It changes only how the work is
	// dealt: any Weights give the same merged answer.
	Weights []FolderWeight `json:"weights,omitempty"`
}

// GlobShard is one share of a glob split over several guest instances
// (host/fanout), as [GrepShard] is of a grep: the guest walks only its
// share of the tree and answers with its matches, for the host to merge
// (tools.MergeGlob) into exactly the answer one instance gives. It is not
// a model's tool either.
const GlobShard = "glob_shard"

// GlobShardArgs are the arguments of glob_shard: a glob's, and which share
// of the tree to walk, Shard of Shards.
//
//moat:wire
type GlobShardArgs struct {
	GlobArgs
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
}

// GlobShardResult is the Text of a successful glob_shard answer, as JSON
// ([AppendGlobShard]).
type GlobShardResult struct {
	// Matches are the shard's first matches in the order glob shows them
	// (sorted, a folder with its trailing "/"), at most the call's cap,
	// each as a Go string literal (strconv.Quote) so that a name's bytes
	// that are not UTF-8 survive JSON; Total counts all of them.
	Matches []string `json:"matches"`
	Total   int      `json:"total"`
	// Notes, MoreNotes and TimeUp are as in a GrepShardResult.
	Notes     []GrepNote `json:"notes,omitempty"`
	MoreNotes int        `json:"more_notes,omitempty"`
	TimeUp    string     `json:"time_up,omitempty"`
}

// GrepShardResult is the Text of a successful grep_shard answer, as JSON
// ([AppendGrepShard]).
type GrepShardResult struct {
	Parts []GrepPart `json:"parts"`
	More  bool       `json:"more,omitempty"` // the shard stopped at the cap with hits left
	// StopAt is the file at which the shard stopped, when More: the merge
	// keeps no note of the walk beyond where one instance would have stopped.
	StopAt string `json:"stop_at,omitempty"`
	// Weights are the heaviest folders the shard walked to their end: the
	// bytes it searched in each (its share, where the folder is split),
	// for the host to deal the next grep's folders evenly
	// (GrepShardArgs.Split).
	Weights []FolderWeight `json:"weights,omitempty"`
	// Notes are what the shard's walk could not do (an ignore file past its
	// bounds, a folder it could not read), in walk order, each once;
	// MoreNotes counts those past the ones kept.
	Notes     []GrepNote `json:"notes,omitempty"`
	MoreNotes int        `json:"more_notes,omitempty"`
	// TimeUp is the note of a shard that stopped at its deadline.
	TimeUp string `json:"time_up,omitempty"`
}

// FolderWeight is the work a shard did in one folder and all below it:
// the bytes of the files it searched there, and a few KiB more for each
// file (opening one costs about that); and how many of the folder's own
// entries it walked (its files searched and its folders entered), which
// is what listing it costs.
//
//moat:wire
type FolderWeight struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Entries int    `json:"entries,omitempty"`
}

// GrepNote is one note of a grep_shard (or glob_shard) answer and the path of the walk
// where it arose ("" for start's ancestors), by which the merge orders the
// notes of all shards as one walk would have.
type GrepNote struct {
	At   string `json:"at"`
	Text string `json:"text"`
}

// GrepPart is the hits of one file in a grep_shard answer.
type GrepPart struct {
	Path string `json:"path"`
	Text string `json:"text"` // hit lines, each ending in "\n"
	Hits int    `json:"hits"`
	// Cuts are where Text may be cut: Cuts[k] ends the output of the
	// file's first k+1 hits (with their trailing context), so that a merge
	// can stop where one instance would have. len(Cuts) == Hits.
	Cuts []int `json:"cuts,omitempty"`
}
