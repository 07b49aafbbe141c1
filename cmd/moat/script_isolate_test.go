package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestIsolate runs testscripts/isolate: the OS isolation layer through the
// CLI (moat tool, moat doctor and moat replay under --isolate require, auto
// and off, and a kernel that refuses user namespaces).
func TestIsolate(t *testing.T) { testscript.Run(t, scriptParams(t, "isolate", nil)) }
