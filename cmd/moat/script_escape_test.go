package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
)

// TestEscape runs testscripts/escape, the security regression suite: every
// threat class of ARCHITECTURE.md tried through the CLI with the exact outcome a
// model or a person sees (SECURITY.md maps each class to its script).
//
// The scripts in testscripts/escape/links (symlinks out, special files) run
// once per resolver and once more inside the isolated child, so each path in
// is tried with every layer combination the machine supports; a mode the
// machine lacks is skipped with the reason.
func TestEscape(t *testing.T) {
	t.Run("scripts", func(t *testing.T) {
		testscript.Run(t, escapeParams(t, "escape", nil))
	})
	modes := []struct{ name, resolver, isolate string }{
		{"resolver=root", "root", "off"},
		{"resolver=openat2", "openat2", "off"},
		{"isolate=require", "auto", "require"},
	}
	for _, m := range modes {
		t.Run("links/"+m.name, func(t *testing.T) {
			if reason := modeUnavailable(m.resolver, m.isolate); reason != "" {
				t.Skip(reason)
			}
			testscript.Run(t, escapeParams(t, filepath.Join("escape", "links"), []string{
				"MOAT_RESOLVER=" + m.resolver, "MOAT_ISOLATE=" + m.isolate,
			}))
		})
	}
}

// escapeParams are scriptParams with escapeCmds and extra environment
// (KEY=VALUE).
func escapeParams(t *testing.T, area string, env []string) testscript.Params {
	p := scriptParams(t, area, escapeCmds())
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			e.Setenv(k, v)
		}
		return nil
	}
	return p
}

// modeUnavailable says why a resolver or isolation mode cannot be tried
// here, or "" when it can. openat2 falls back to os.Root silently at run
// time, so its run is skipped rather than repeat the root run under its name.
func modeUnavailable(resolver, isolate string) string {
	if resolver == "openat2" {
		if runtime.GOOS != "linux" {
			return "openat2 is Linux-only"
		}
		pol, err := policy.New(nil, nil)
		if err != nil {
			return err.Error()
		}
		f, err := confine.New(os.TempDir(), confine.Openat2, pol)
		if err != nil {
			return "confine: " + err.Error()
		}
		defer f.Close()
		if f.Kind() != confine.Openat2 {
			return "openat2 unavailable on this kernel (moat falls back to os.Root)"
		}
	}
	if isolate == "require" && !userNamespacesWork() {
		return "unprivileged user namespaces are unavailable here, so --isolate require cannot start"
	}
	return ""
}

// escapeCmds are fileCmds plus what only the escape scripts need.
func escapeCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := fileCmds()
	cmds["bytes"] = cmdBytes
	// grow NAME SIZE: extend an existing file to SIZE bytes (suffix K, M, G) with a hole, keeping its start.
	cmds["grow"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: grow NAME SIZE")
		}
		ts.Check(os.Truncate(ts.MkAbs(args[0]), parseSize(ts, args[1])))
	}
	// bigargs FILE FIELD SIZE [BASE_JSON]: tool arguments (BASE_JSON, default {}) with FIELD set to SIZE bytes of "a".
	cmds["bigargs"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 3 || len(args) > 4 {
			ts.Fatalf("usage: bigargs FILE FIELD SIZE [BASE_JSON]")
		}
		obj := map[string]any{}
		if len(args) == 4 {
			ts.Check(json.Unmarshal([]byte(args[3]), &obj))
		}
		obj[args[1]] = strings.Repeat("a", int(parseSize(ts, args[2])))
		b, err := json.Marshal(obj)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
	}
	// nestargs FILE DEPTH: {"path": [[[...]]]} nested DEPTH arrays deep.
	cmds["nestargs"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: nestargs FILE DEPTH")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		b := `{"path":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b), 0o644))
	}
	// mkfile NAME CONTENT: a file whose name and content may hold Go string escapes (\x1b, \r, \u202e).
	cmds["mkfile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: mkfile NAME CONTENT")
		}
		name, err := strconv.Unquote(`"` + args[0] + `"`)
		ts.Check(err)
		content, err := strconv.Unquote(`"` + args[1] + `"`)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(name), []byte(content), 0o644))
	}
	// mksock NAME: a Unix domain socket file that stays after its listener is closed.
	cmds["mksock"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: mksock NAME")
		}
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: ts.MkAbs(args[0]), Net: "unix"})
		ts.Check(err)
		l.SetUnlinkOnClose(false)
		ts.Check(l.Close())
	}
	// mknod NAME MAJOR MINOR: a character device (needs root; guard with [root]).
	cmds["mknod"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 3 {
			ts.Fatalf("usage: mknod NAME MAJOR MINOR")
		}
		ts.Check(mknodChar(ts.MkAbs(args[0]), args[1], args[2]))
	}
	for k, v := range llmCmds() {
		cmds[k] = v
	}
	return cmds
}
