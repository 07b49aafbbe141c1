// Command sdkfloor is the floor of moat mcp's per-call rows: an MCP
// server on the official Go SDK, as moat mcp is, whose read_file and
// stat do nothing but read or stat the path they are given, with no
// sandbox, no schema of moat's and no log. cmd/moat-bench builds it and
// times it beside moat mcp and mark3labs/mcp-filesystem-server; what it
// costs more than mark3labs is the SDK's, not the sandbox's.
//
//	sdkfloor ROOT
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sdkfloor ROOT")
		os.Exit(2)
	}
	root := os.Args[1]
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	path := func(req *mcp.CallToolRequest) (string, error) {
		var a struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return "", err
		}
		if filepath.IsAbs(a.Path) {
			return a.Path, nil
		}
		return filepath.Join(root, a.Path), nil
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkfloor", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "read_file", Description: "Read a file.", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, err := path(req)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		return text(string(b)), nil
	})
	s.AddTool(&mcp.Tool{Name: "stat", Description: "Stat a file.", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, err := path(req)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		return text(fmt.Sprintf("%s: %d bytes, %v, modified %v", fi.Name(), fi.Size(), fi.Mode(), fi.ModTime())), nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "sdkfloor:", err)
		os.Exit(1)
	}
}
