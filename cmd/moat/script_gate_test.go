package main

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestGate drives the approval gate through a real pseudo-terminal
// (ttyin/ttyout): what a person sees and what their answer does.
func TestGate(t *testing.T) {
	testscript.Run(t, scriptParams(t, "gate", map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"hardlink": cmdHardlink,
		"bytes":    cmdBytes,
	}))
}

// hardlink OLD NEW: make NEW a second hard link to OLD.
func cmdHardlink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hardlink OLD NEW")
	}
	ts.Check(os.Link(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
}

// bytes FILE "GO STRING": the file holds exactly these bytes (a Go quoted
// string, so CR, tabs and a missing final newline can be written).
func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: [!] bytes FILE \"GO STRING\"")
	}
	want, err := strconv.Unquote(args[1])
	if err != nil {
		ts.Fatalf("bytes: %v", err)
	}
	got, err := os.ReadFile(ts.MkAbs(args[0]))
	if err != nil && !neg {
		ts.Fatalf("bytes: %v", err)
	}
	if eq := err == nil && bytes.Equal(got, []byte(want)); eq == neg {
		ts.Fatalf("bytes: %s holds %q; want %s%q", args[0], got, map[bool]string{true: "anything but ", false: ""}[neg], want)
	}
}
