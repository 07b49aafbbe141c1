package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestReplay runs testscripts/replay: sessions recorded with --record
// against the fake model and replayed with moat replay (the same build
// passes byte for byte; a changed output fails with a diff naming the
// call), and recordings kept in the folder, each of which is a script
// that replays itself through moattest's replay command.
func TestReplay(t *testing.T) {
	cmds := llmCmds()
	cmds["mcp"], cmds["mcpraw"] = cmdMCP, cmdMCPRaw // sessions recorded over MCP
	testscript.Run(t, scriptParams(t, "replay", cmds))
}
