package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	cmds["copytree"], cmds["replacein"] = cmdCopyTree, cmdReplaceIn
	cmds["mkfifo"], cmds["ctlfile"] = fileCmds()["mkfifo"], fileCmds()["ctlfile"]
	testscript.Run(t, scriptParams(t, "replay", cmds))
}

// copiedTime is the time copytree gives every entry it makes: another
// machine's checkout, long after (or before) the recording.
var copiedTime = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// cmdCopyTree copies a tree as a fresh checkout on another machine would
// have it: the same names, contents, modes and links, and every time new.
//
//	copytree SRC DST
func cmdCopyTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: copytree SRC DST")
	}
	src, dst := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case info.IsDir():
			dirs = append(dirs, out)
			return os.Mkdir(out, 0o755)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, data, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chtimes(out, copiedTime, copiedTime)
		}
	})
	ts.Check(err)
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first: a child's creation changes its folder's time
		ts.Check(os.Chtimes(dirs[i], copiedTime, copiedTime))
	}
}

// cmdReplaceIn replaces the one occurrence of OLD in FILE with NEW (a
// recorded file, a recorded answer, a file of the tree); with -re, OLD is
// a regular expression that must match once, and NEW may name its groups
// (${1}).
//
//	replacein [-re] FILE OLD NEW
func cmdReplaceIn(ts *testscript.TestScript, neg bool, args []string) {
	re := len(args) > 0 && args[0] == "-re"
	if re {
		args = args[1:]
	}
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replacein [-re] FILE OLD NEW")
	}
	p := ts.MkAbs(args[0])
	data, err := os.ReadFile(p)
	ts.Check(err)
	info, err := os.Stat(p)
	ts.Check(err)
	var out string
	if re {
		x, err := regexp.Compile(args[1])
		ts.Check(err)
		if n := len(x.FindAllStringIndex(string(data), -1)); n != 1 {
			ts.Fatalf("replacein: %s matches %q %d times, want once", args[0], args[1], n)
		}
		out = x.ReplaceAllString(string(data), args[2])
	} else {
		if n := strings.Count(string(data), args[1]); n != 1 {
			ts.Fatalf("replacein: %s holds %q %d times, want once", args[0], args[1], n)
		}
		out = strings.Replace(string(data), args[1], args[2], 1)
	}
	ts.Check(os.WriteFile(p, []byte(out), info.Mode().Perm()))
}
