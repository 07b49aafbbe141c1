package mcpserver

import (
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/moatdev/moat/guest/proto"
)

// StatOutput is stat's structuredContent: the fields of its text answer
// ("path: ...", "kind: ...", "size: N bytes", "modified: ...", "target:
// ..." for a link, and "mode: 0644 (-rw-r--r--)", "accessed: ...",
// "changed: ...", "created: ..." as the host describes them), the text
// staying as it is for clients that read text.
type StatOutput struct {
	Path     string `json:"path" jsonschema:"the path, relative to the workspace root"`
	Kind     string `json:"kind" jsonschema:"file, folder, symlink or another kind"`
	Size     *int64 `json:"size,omitempty" jsonschema:"the size in bytes"`
	Modified string `json:"modified,omitempty" jsonschema:"the last modification time, RFC 3339, UTC"`
	Target   string `json:"target,omitempty" jsonschema:"for a symlink: where it points, or why that is not shown"`
	Mode     string `json:"mode,omitempty" jsonschema:"the permission bits in octal, with setuid, setgid and sticky (0644)"`
	// Permissions is Mode as ls shows it, after the kind's letter.
	Permissions string `json:"permissions,omitempty" jsonschema:"the permission bits as ls shows them (-rw-r--r--)"`
	Accessed    string `json:"accessed,omitempty" jsonschema:"the last access time, RFC 3339, UTC"`
	Changed     string `json:"changed,omitempty" jsonschema:"the last status change (content, mode, links), RFC 3339, UTC"`
	Created     string `json:"created,omitempty" jsonschema:"the creation time, where the host keeps one, RFC 3339, UTC"`
}

// outputSchema is the outputSchema of the tools whose answer has a fixed
// shape, or nil.
func outputSchema(tool string) *jsonschema.Schema {
	if !proto.ToolIs(tool, proto.Describes) {
		return nil
	}
	s, err := jsonschema.For[StatOutput](nil)
	if err != nil {
		panic(err) // a static struct: a failure is a programming error
	}
	return s
}

// structured is a successful answer's structuredContent for the tools
// outputSchema describes, read from the answer's text (after redaction,
// so it shows nothing the text does not), or nil.
func structured(tool, text string) any {
	if !proto.ToolIs(tool, proto.Describes) {
		return nil
	}
	var out StatOutput
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch key {
		case "path":
			out.Path = unquote(val)
		case "kind":
			out.Kind = val
		case "size":
			if n, err := strconv.ParseInt(strings.Fields(val)[0], 10, 64); err == nil {
				out.Size = &n
			}
		case "modified":
			out.Modified = val
		case "target":
			out.Target = unquote(val)
		case "mode":
			// "0644 (-rw-r--r--)"; "not visible ..." when the host did not
			// describe the file.
			if bits, ls, ok := strings.Cut(val, " ("); ok && strings.HasSuffix(ls, ")") && isOctal(bits) {
				out.Mode, out.Permissions = bits, strings.TrimSuffix(ls, ")")
			}
		case "accessed":
			out.Accessed = val
		case "changed":
			out.Changed = val
		case "created":
			out.Created = val
		}
	}
	return out
}

// isOctal reports whether s is digits 0 to 7, at least one.
func isOctal(s string) bool {
	return s != "" && strings.Trim(s, "01234567") == ""
}

// unquote undoes the guest's quoting of a path that needs it.
func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}
