// The comparison of moat-bench's per-call rows: mark3labs/mcp-filesystem-server,
// a Go MCP filesystem server with no sandbox, built from the module proxy at
// an exact version. A module of its own so that moat's go.mod does not take
// on its dependencies (mcp-go and the rest); moat-bench builds it with
// go build -C here.
module github.com/moatdev/moat/cmd/moat-bench/testdata/mark3labs

go 1.24

tool github.com/mark3labs/mcp-filesystem-server

require github.com/mark3labs/mcp-filesystem-server v0.11.1 // indirect; the server moat's read_file and stat are timed beside (its read_file and get_file_info); the rest are its own dependencies

require (
	github.com/djherbis/times v1.6.0 // indirect
	github.com/gabriel-vasile/mimetype v1.4.9 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mark3labs/mcp-go v0.32.0 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/net v0.39.0 // indirect
	golang.org/x/sys v0.32.0 // indirect
)
