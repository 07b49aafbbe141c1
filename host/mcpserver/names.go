package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/host/toolspec"

	"github.com/moatdev/moat/host/suggest"
)

// otherNames maps the tool names of other filesystem MCP servers (the
// reference @modelcontextprotocol/server-filesystem and
// mark3labs/mcp-filesystem-server) to moat's tool that does that job, for
// a client or a model that calls them from habit. A name mapped to ""
// does something moat refuses to do; why is in refusedWhy.
func otherNames() map[string]string {
	return map[string]string{
		"read_text_file":            "read_file",
		"read_media_file":           "",
		"read_multiple_files":       ReadFiles,
		"list_directory":            "list_dir",
		"list_directory_with_sizes": "list_dir",
		"directory_tree":            "list_dir",
		"tree":                      "list_dir",
		"search_files":              "glob",
		"search_within_files":       "grep",
		"get_file_info":             "stat",
		"write_file":                "propose_write",
		"edit_file":                 "propose_edit",
		"modify_file":               "propose_edit",
		"create_directory":          "",
		"move_file":                 "",
		"copy_file":                 "",
		"delete_file":               "",
		"list_allowed_directories":  "",
	}
}

// howTo says how moat's tool does another server's job, when it takes
// an argument to: "" otherwise.
func howTo(name string) string {
	switch name {
	case "list_directory_with_sizes":
		return ` with "sizes": true`
	case "directory_tree", "tree":
		return ` with "depth": 2 to 8 (the folders inside too, one path a line)`
	case "search_within_files":
		return ` (an RE2 pattern)`
	}
	return ""
}

// refusedWhy says why moat has no tool for one of otherNames' "" entries.
func (s *Server) refusedWhy(name string) string {
	switch {
	case name == "read_media_file":
		return "moat returns text only (read_file shows a binary file's size and type instead of its bytes)"
	case name == "list_allowed_directories" && len(s.labels) > 1:
		return fmt.Sprintf("list_dir with path \".\" lists this server's roots, one folder each (%s); every path starts with its root's name", strings.Join(s.labels, ", "))
	case name == "list_allowed_directories":
		return "this server serves one folder, its root: every path is relative to it (list_dir with path \".\" lists it)"
	}
	return "moat never creates, moves, copies or deletes files; it changes a file only through propose_write or propose_edit, after the user approves the diff"
}

// unknownTools answers a tools/call of a tool this server does not have
// with a protocol error (-32602, as the SDK does) that names moat's
// nearest tool and the tools this session has, so that a model calling
// another server's names from habit can correct itself.
func (s *Server) unknownTools(cat *toolspec.Catalog) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			cr, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || cr.Params == nil {
				return next(ctx, method, req)
			}
			name := cr.Params.Name
			if s.registered(name) {
				return next(ctx, method, req)
			}
			ss, _ := req.GetSession().(*mcp.ServerSession)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: s.unknownMessage(cat, name, ss != nil && canElicit(ss))}
		}
	}
}

func (s *Server) registered(name string) bool {
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	return false
}

// unknownMessage is the error for a call of name, which this server does
// not have; elicit tells whether the session is offered the writes.
func (s *Server) unknownMessage(cat *toolspec.Catalog, name string, elicit bool) string {
	var listed []string
	for _, n := range s.names {
		if t, ok := cat.Lookup(n); ok && t.Write && !elicit {
			continue
		}
		listed = append(listed, n)
	}
	tools := "; moat's tools are " + strings.Join(listed, ", ")
	shown := fmt.Sprintf("%q", truncate(name, 80))
	if t, ok := cat.Lookup(name); ok && t.Write {
		return fmt.Sprintf("unknown tool %s: writes are not offered by this server (moat mcp --writes deny, or no way to ask the user)%s", shown, tools)
	}
	near, known := otherNames()[name]
	switch {
	case known && near == "":
		return fmt.Sprintf("unknown tool %s: %s%s", shown, s.refusedWhy(name), tools)
	case known && !s.registered(near):
		return fmt.Sprintf("unknown tool %s: moat's %s does that, but it is not offered here (writes are off, or this client cannot ask the user)%s", shown, near, tools)
	case !known:
		near = nearest(name, listed)
	}
	if near != "" {
		return fmt.Sprintf("unknown tool %s: did you mean %q%s?%s", shown, near, howTo(name), tools)
	}
	return fmt.Sprintf("unknown tool %s%s", shown, tools)
}

// nearest is the name closest to s (at most a third of its length in
// edits, and at most 4), or "".
func nearest(s string, names []string) string {
	best, bestD := "", min(4, max(1, len(s)/3))+1
	for _, n := range names {
		if d := suggest.Distance(strings.ToLower(s), n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
