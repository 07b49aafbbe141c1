package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestSessions runs testscripts/sessions: moat chat --continue and
// --resume, and moat sessions, against the fake model server. Each script
// has its own state folder ($XDG_STATE_HOME, outside its root).
func TestSessions(t *testing.T) {
	cmds := llmCmds()
	cmds["sessionid"] = cmdSessionID
	cmds["mode"] = cmdMode
	testscript.Run(t, scriptParams(t, "sessions", cmds))
}

// sessionid [-prefix LEN] VAR [N]: set VAR to the ID of the saved
// session, the Nth saved (oldest file first) when there are several; with
// -prefix, to its first LEN characters only.
func cmdSessionID(ts *testscript.TestScript, neg bool, args []string) {
	prefix := 0
	if len(args) > 2 && args[0] == "-prefix" {
		var err error
		prefix, err = strconv.Atoi(args[1])
		ts.Check(err)
		args = args[2:]
	}
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: sessionid [-prefix LEN] VAR [N]")
	}
	des, err := os.ReadDir(filepath.Join(ts.Getenv("XDG_STATE_HOME"), "moat", "sessions"))
	ts.Check(err)
	var ids []string
	mod := map[string]time.Time{}
	for _, de := range des {
		if id, ok := strings.CutSuffix(de.Name(), ".jsonl"); ok {
			fi, err := de.Info()
			ts.Check(err)
			ids, mod[id] = append(ids, id), fi.ModTime()
		}
	}
	sort.Slice(ids, func(i, j int) bool { return mod[ids[i]].Before(mod[ids[j]]) })
	n := 1
	if len(args) == 2 {
		n, err = strconv.Atoi(args[1])
		ts.Check(err)
	} else if len(ids) != 1 {
		ts.Fatalf("sessionid: %d sessions saved, want exactly one: %v", len(ids), ids)
	}
	if n < 1 || n > len(ids) {
		ts.Fatalf("sessionid: no session %d of %d", n, len(ids))
	}
	id := ids[n-1]
	if prefix > 0 {
		id = id[:min(prefix, len(id))]
	}
	ts.Setenv(args[0], id)
}

// mode PATH PERM: PATH has exactly these permission bits (octal).
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mode PATH PERM")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fi.Mode().Perm(); uint64(got) != want {
		ts.Fatalf("%s has mode %s, want %s", args[0], fmt.Sprintf("%04o", got), fmt.Sprintf("%04o", want))
	}
}
