package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/scripted"
)

// The flags that name a file or a folder, and how each command is run with
// one of them set (the rest of its command line).
var (
	fileFlags   = []string{"config", "system", "transcript", "audit", "log", "instructions", "record", "token-file"}
	folderFlags = []string{"root", "cache-dir"}
	fileRuns    = map[string][]string{
		"ask":    {"--model", "qwen3", "what is here?"},
		"chat":   {"--model", "qwen3"},
		"tool":   {"stat", `{"path":"."}`},
		"mcp":    nil,
		"doctor": nil,
		"replay": {filepath.Join("..", "..", "testscripts", "replay", "recorded_openai.txtar")},
	}
)

// TestFileFlagsNeverPanic runs every command with each flag that takes a
// file or a folder pointed at a missing folder, at a directory, at a
// regular file where a folder is wanted and (unless the test runs as root,
// which reads anything) at an unreadable file. Whatever the outcome, the
// user sees no stack trace: either the command works, or it fails with one
// line that names the flag.
func TestFileFlagsNeverPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command several dozen times")
	}
	srv := scripted.Start(scripted.Script{Turns: manyTurns(200)})
	defer srv.Close()
	// Each case gets a fresh folder: a run may create what it names.
	kinds := map[string]func(dir string) string{
		"missing folder": func(dir string) string { return filepath.Join(dir, "no-such-folder", "f") },
		"directory":      func(dir string) string { return dir },
		"regular file": func(dir string) string {
			f := filepath.Join(dir, "file.txt")
			os.WriteFile(f, []byte("not a config line\n"), 0o644)
			return f
		},
	}
	if os.Geteuid() != 0 {
		kinds["unreadable"] = func(dir string) string {
			f := filepath.Join(dir, "unreadable.txt")
			os.WriteFile(f, []byte("x\n"), 0o000)
			return f
		}
		kinds["unreadable folder"] = func(dir string) string {
			d := filepath.Join(dir, "locked")
			os.Mkdir(d, 0o000)
			return d
		}
	} else {
		t.Log("running as root, which can read any file: the unreadable case is left out")
	}
	e := &env{getenv: func(string) string { return "" }}
	root := rootCommand(e)
	seen := map[string]bool{}
	for _, c := range root.Subcommands {
		rest, ok := fileRuns[c.Name]
		c.FlagSet.VisitAll(func(f *flag.Flag) {
			_, usage := flag.UnquoteUsage(f)
			arg, _ := flag.UnquoteUsage(f)
			takesPath := arg == "file" || arg == "folder" || strings.HasSuffix(f.Name, "-dir")
			listed := slices.Contains(fileFlags, f.Name) || slices.Contains(folderFlags, f.Name)
			if takesPath && !listed {
				t.Errorf("moat %s --%s takes a path (%s) but this test does not know it", c.Name, f.Name, usage)
			}
			if !listed {
				return
			}
			if !ok {
				t.Errorf("moat %s has --%s but this test does not know how to run it", c.Name, f.Name)
				return
			}
			seen[f.Name] = true
			if f.Name == "cache-dir" && c.Name != "tool" {
				return // each run compiles the guest anew; every command opens the cache through the same code
			}
			for kind, mk := range kinds {
				t.Run(fmt.Sprintf("%s/%s/%s", c.Name, f.Name, kind), func(t *testing.T) {
					path := mk(t.TempDir())
					args := append([]string{c.Name, "--" + f.Name, path}, rest...)
					code, stderr := runInProcess(t, srv.URL, args)
					for _, bad := range []string{"goroutine ", "panic", "runtime error", ".go:"} {
						if strings.Contains(stderr, bad) {
							t.Fatalf("moat %s: exit %d, a stack trace or internal error:\n%s", strings.Join(args, " "), code, stderr)
						}
					}
					if code == exitOK {
						return
					}
					if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
						t.Errorf("moat %s: exit %d with %d lines on stderr, want one:\n%s", strings.Join(args, " "), code, n+1, stderr)
					}
					named := strings.Contains(stderr, "--"+f.Name+" ") || strings.Contains(stderr, "--"+f.Name+":")
					if !named && !strings.HasPrefix(stderr, "moat: "+path+":") {
						t.Errorf("moat %s: exit %d without naming --%s or the file:\n%s", strings.Join(args, " "), code, f.Name, stderr)
					}
				})
			}
		})
	}
	for _, n := range append(fileFlags, folderFlags...) {
		if !seen[n] {
			t.Errorf("no command has --%s any more: update this test", n)
		}
	}
}

// runInProcess runs moat with args against the model server at host, with
// empty input (chat and mcp end at once), and returns its exit status and
// standard error. A panic is reported as the test's failure with its stack.
func runInProcess(t *testing.T, host string, args []string) (code int, stderr string) {
	t.Helper()
	vars := map[string]string{"OLLAMA_HOST": host, "MOAT_CACHE_DIR": sharedCache(t), "MOAT_ISOLATE": "off"}
	if slices.Contains(args, "--cache-dir") {
		delete(vars, "MOAT_CACHE_DIR")
	}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }, sources: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("moat %s panicked: %v\n%s", strings.Join(args, " "), p, debug.Stack())
		}
	}()
	code = exitCode(dispatch(ctx, e, rootCommand(e), args), &errb)
	return code, errb.String()
}

// manyTurns is a script of n plain answers.
func manyTurns(n int) []scripted.Turn {
	ts := make([]scripted.Turn, n)
	for i := range ts {
		ts[i] = scripted.Turn{Text: "an answer"}
	}
	return ts
}

// A panic that escapes a command is one line for the user; the stack goes
// to a file it names.
func TestCrashIsOneLine(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var b bytes.Buffer
	code := crashed("boom", []byte("goroutine 1 [running]:\nmain.main()\n"), &b)
	msg := b.String()
	if code != exitFailure || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "goroutine") {
		t.Fatalf("exit %d, %q", code, msg)
	}
	_, name, ok := strings.Cut(strings.TrimSuffix(msg, ", please report it\n"), "the details are in ")
	if !ok {
		t.Fatalf("no file named: %q", msg)
	}
	if got, err := os.ReadFile(name); err != nil || !strings.Contains(string(got), "panic: boom") || !strings.Contains(string(got), "goroutine 1") {
		t.Fatalf("%s: %q, %v", name, got, err)
	}
}
