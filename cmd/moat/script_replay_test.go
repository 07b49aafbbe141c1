package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestReplay runs testscripts/replay: sessions recorded with --record
// against the fake model, replayed with moat replay (the same build passes
// byte for byte; a changed tool output fails with a diff naming the call),
// and recordings kept in the folder, which replay themselves.
func TestReplay(t *testing.T) { testscript.Run(t, scriptParams(t, "replay", llmCmds())) }
