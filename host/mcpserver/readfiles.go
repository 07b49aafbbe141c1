package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/toolspec"
)

// ReadFiles is the MCP-only tool that reads several files in one call, the
// job of the reference server's read_multiple_files. It is named after
// read_file, of which it is the plural, in moat's short style (list_dir,
// read_file); a call of read_multiple_files is told this name.
//
// It is composed in the host, not run in the guest: each file is one
// read_file call through the engine (the same validation, deny-list,
// confinement, limits and redaction), so each file is judged alone and a
// refusal or an error for one is shown in its place without hiding the
// others.
const ReadFiles = "read_files"

// batches reports whether ReadFiles is the plural of the named tool, and
// so offered beside it: the registry's tool that reads one file by lines.
func batches(tool string) bool {
	return proto.ToolIs(tool, proto.PagesByLine) && !proto.ToolIs(tool, proto.Internal)
}

// The bounds of one read_files call.
const (
	// MaxReadFilesPaths is the most files one call names.
	MaxReadFilesPaths = 16
	// MaxReadFilesBytes is the most text one call returns. Each file is
	// also paged as read_file pages it (--max-read-bytes); the files past
	// the budget are named, not read, and the model is told to read them
	// with read_file.
	MaxReadFilesBytes = 1 << 20
)

// readFilesArgs are read_files' arguments.
type readFilesArgs struct {
	Paths []string `json:"paths" jsonschema:"files to read, relative to the workspace root (at most 16); each is read as read_file reads it, and one that cannot be read is reported in its place"`
}

// FileText is one file of a read_files answer.
type FileText struct {
	Path string `json:"path" jsonschema:"the path as given"`
	// Text is read_file's answer for the file: its text (paged as
	// read_file pages it), or the error that says why it was not read.
	Text    string `json:"text" jsonschema:"read_file's answer: the file's text, or why it was not read"`
	IsError bool   `json:"isError,omitempty" jsonschema:"true when text is an error, not the file's content"`
}

// ReadFilesOutput is read_files' structuredContent.
type ReadFilesOutput struct {
	Files []FileText `json:"files"`
}

// readFilesTool describes read_files for MCP.
func readFilesTool() *mcp.Tool {
	in, err := jsonschema.For[readFilesArgs](nil)
	if err != nil {
		panic(err) // a static struct: a failure is a programming error
	}
	in.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	minItems, maxItems := 1, MaxReadFilesPaths
	in.Properties["paths"].Type, in.Properties["paths"].Types = "array", nil // a list, never null
	in.Properties["paths"].MinItems = &minItems
	in.Properties["paths"].MaxItems = &maxItems
	out, err := jsonschema.For[ReadFilesOutput](nil)
	if err != nil {
		panic(err)
	}
	closed := false
	return &mcp.Tool{
		Name:  ReadFiles,
		Title: "Read several files",
		Description: fmt.Sprintf("Read up to %d text files in one call, each exactly as read_file reads it (the same limits and paging). "+
			"A file that cannot be read (missing, denied, a folder) is reported in its place and the others are still read. "+
			"Each file starts with a line ==> \"PATH\" (N of M) <==. Use read_file to page through a long file.", MaxReadFilesPaths),
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  &mcp.ToolAnnotations{Title: "Read several files", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closed},
	}
}

// readFiles runs a read_files call.
func (s *Server) readFiles(ctx context.Context, raw json.RawMessage) *mcp.CallToolResult {
	var a readFilesArgs
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil || dec.More() {
		msg := "read_files arguments must be a JSON object {\"paths\": [\"file\", ...]}"
		if err != nil {
			msg += ": " + err.Error()
		}
		return errorResult(toolspec.Errorf("%s", msg))
	}
	switch n := len(a.Paths); {
	case n == 0:
		return errorResult(toolspec.Errorf("read_files needs paths: a list of 1 to %d files", MaxReadFilesPaths))
	case n > MaxReadFilesPaths:
		return errorResult(toolspec.Errorf("read_files takes at most %d paths, got %d: split the call", MaxReadFilesPaths, n))
	}
	var out ReadFilesOutput
	var b strings.Builder
	budget := MaxReadFilesBytes
	failed := 0
	for i, p := range a.Paths {
		var r toolspec.Result
		if budget <= 0 {
			r = toolspec.Errorf("not read: this call's answer reached its %d KiB budget; read %s with read_file", MaxReadFilesBytes>>10, p)
		} else {
			args, _ := json.Marshal(proto.ReadFileArgs{Path: p})
			r = s.eng.Call(ctx, proto.ReadFile, args)
			if len(r.Text) > budget {
				r = toolspec.Errorf("not read: %s's page (%d bytes) does not fit what is left of this call's %d KiB budget; read it with read_file", p, len(r.Text), MaxReadFilesBytes>>10)
			}
		}
		budget -= len(r.Text)
		if r.IsError {
			failed++
		}
		out.Files = append(out.Files, FileText{Path: p, Text: r.Text, IsError: r.IsError})
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "==> %q (%d of %d) <==\n", p, i+1, len(a.Paths))
		b.WriteString(strings.TrimSuffix(r.Text, "\n"))
		b.WriteString("\n")
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: b.String()}},
		StructuredContent: out,
		// The call failed only if no file could be read.
		IsError: failed == len(a.Paths),
	}
}

func errorResult(r toolspec.Result) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: true}
}
