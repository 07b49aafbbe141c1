package main

import (
	"context"
	"errors"
	"github.com/moatdev/moat/isolate"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the moat command inside scripts.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"moat": func() { os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// scriptParams is the setup every script folder shares: a compiled-module
// cache shared by all scripts of the run (compiling the guest once, not once
// per script), conditions, and UPDATE_SCRIPTS=1 to rewrite golden output.
// Each TestXxx passes the custom commands its area needs.
func scriptParams(t *testing.T, area string, cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) testscript.Params {
	cache := sharedCache(t)
	all := commonCmds()
	for k, v := range cmds {
		all[k] = v
	}
	return testscript.Params{
		Dir:                 filepath.Join("..", "..", "testscripts", area),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") == "1",
		Cmds:                all,
		Setup: func(env *testscript.Env) error {
			env.Setenv("MOAT_CACHE_DIR", cache)
			// A race-built moat otherwise sleeps 1 s before every exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			env.Setenv("MOAT_ISOLATE", "off") // scripts opt in to isolation explicitly
			// ttyin types every answer before moat starts; the gate
			// would discard them as typed ahead (typeahead_pty_linux_test.go
			// types after each question instead).
			env.Setenv("MOAT_TEST_TYPEAHEAD", "keep")
			env.Setenv("OLLAMA_HOST", "http://127.0.0.1:9") // nothing listens there
			// Saved chat sessions: this script's own, outside its root.
			env.Setenv("XDG_STATE_HOME", env.WorkDir+".state")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "userns":
				return userNamespacesWork(), nil
			case "root":
				return os.Geteuid() == 0, nil
			case "landlock": // the kernel has Landlock (ABI 1 or later)
				abi, err := isolate.LandlockABI()
				return err == nil && abi >= 1, nil
			}
			return false, nil
		},
	}
}

// commonCmds are the custom script commands every area gets.
func commonCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"stubserver": cmdStubServer,
		// exitcode N PROG [ARGS...]: run PROG like exec and require exit status N
		// (exec alone only tells zero from non-zero; moat's statuses are a contract).
		"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) < 2 || neg {
				ts.Fatalf("usage: exitcode N PROG [ARGS...]")
			}
			want, err := strconv.Atoi(args[0])
			ts.Check(err)
			err = ts.Exec(args[1], args[2:]...)
			got := 0
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				got = ee.ExitCode()
			case err != nil:
				ts.Fatalf("%s: %v", args[1], err)
			}
			if got != want {
				ts.Fatalf("%s exited %d, want %d", args[1], got, want)
			}
		},
	}
}

func sharedCache(t *testing.T) string {
	d := os.Getenv("MOAT_TEST_CACHE")
	if d == "" {
		d = filepath.Join(os.TempDir(), "moat-test-cache-"+runtime.Version())
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// userNamespacesWork reports whether this process may create an unprivileged
// user namespace (false on non-Linux, under AppArmor's restriction, or in
// containers that forbid it).
func userNamespacesWork() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	return exec.Command("unshare", "--user", "--map-root-user", "--mount", "--net", "true").Run() == nil
}
