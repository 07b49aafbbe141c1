package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/agent"
)

// maxInstructionBytes bounds one --instructions file: instructions ride in
// every request, so they must leave a local model's window for the work.
const maxInstructionBytes = 64 << 10

// agentsFile is the project-instructions file --agents-md reads from the
// root: the name the agents' convention uses.
const agentsFile = "AGENTS.md"

// instructionFlags add to the system prompt: files of the user's, and the
// root's AGENTS.md only when asked for, since in a folder someone else
// wrote it is their text.
type instructionFlags struct {
	files    stringList
	agentsMD bool
}

func (f *instructionFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.files, "instructions", "add this `file` of yours to the model's instructions (repeatable; at most 64 KiB each)")
	fs.BoolVar(&f.agentsMD, "agents-md", false, "add the root's AGENTS.md to the model's instructions, read through the sandbox (it is text whoever wrote the folder wrote); named in the first activity line")
}

// userFiles reads the --instructions files, on the host: they are the
// user's, like --system. from is where the names came from, for errors
// (failures, exit 1: the command line is right, the file is not).
func (f *instructionFlags) userFiles(from string) ([]agent.Instructions, error) {
	var out []agent.Instructions
	for _, name := range f.files {
		b, err := os.ReadFile(name)
		switch {
		case err != nil:
			return nil, fileError(from, name, err)
		case len(b) > maxInstructionBytes:
			return nil, failf("--instructions: %s is %s, more than the %s instructions may be", name, proto.FormatSize(int64(len(b))), proto.FormatSize(maxInstructionBytes))
		case strings.TrimSpace(string(b)) == "":
			return nil, failf("--instructions: %s is empty", name)
		case !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0:
			return nil, failf("--instructions: %s is not text", name)
		}
		out = append(out, agent.Instructions{From: filepath.Base(name), Text: string(b)})
	}
	return out, nil
}

// workspaceFile reads AGENTS.md from the root through the tools, exactly
// as the model would read it: confined, deny-listed, isolated, paged at
// --max-read-bytes. It says so on activity, as the session's first
// activity line, so nobody is surprised by instructions they did not
// write. A missing or refused file is a note, and the session goes on.
func (f *instructionFlags) workspaceFile(ctx context.Context, tools agent.Dispatcher, activity io.Writer) []agent.Instructions {
	if !f.agentsMD {
		return nil
	}
	res := tools.Call(ctx, proto.ReadFile, []byte(`{"path":"`+agentsFile+`"}`))
	if res.IsError {
		first, _, _ := strings.Cut(res.Text, "\n")
		fmt.Fprintf(activity, "→ %s not added to the instructions (--agents-md): %s\n", agentsFile, agent.Sanitize(first, false))
		return nil
	}
	if len(res.Text) > maxInstructionBytes {
		fmt.Fprintf(activity, "→ %s not added to the instructions (--agents-md): it is more than the %s instructions may be\n", agentsFile, proto.FormatSize(maxInstructionBytes))
		return nil
	}
	fmt.Fprintf(activity, "→ %s added to the instructions (--agents-md; %s, from the root)\n", agentsFile, proto.FormatSize(int64(len(res.Text))))
	return []agent.Instructions{{From: agentsFile, Text: res.Text, Workspace: true}}
}
