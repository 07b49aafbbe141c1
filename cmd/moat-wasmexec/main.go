// Command moat-wasmexec runs a wasip1 program as the wazero command line
// does for `go test` (go_wasip1_wasm_exec with GOWASIRUNTIME=wazero: the
// whole file system mounted at "/", the environment inherited, the real
// clocks, a compilation cache in $TMPDIR/wazero, or in
// $MOAT_WASMEXEC_CACHE when it is set), plus the host module
// moat's runner gives its guest (runner.InstantiateHost), serving the
// confined view of "/": the guest's packages import moat.read_files, so
// wazero's own command cannot instantiate their tests. `make test-guest`
// installs it as .bin/go_wasip1_wasm_exec, ahead of Go's own on PATH.
//
// Usage:
//
//	moat-wasmexec PROGRAM.wasm [ARGS...]
//
// Its exit status is the program's.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/runner"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: moat-wasmexec PROGRAM.wasm [ARGS...]")
		return 2
	}
	code, err := exec(args[0], args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "moat-wasmexec:", err)
		return 1
	}
	return code
}

func exec(prog string, args []string) (int, error) {
	wasm, err := os.ReadFile(prog)
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	rc := wazero.NewRuntimeConfig()
	tmp := os.Getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	dir := filepath.Join(tmp, "wazero")
	if d := os.Getenv("MOAT_WASMEXEC_CACHE"); d != "" {
		// make test-guest gives each run a fresh TMPDIR but keeps the
		// compiled test binaries from one run to the next.
		dir = d
	}
	if cache, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
		rc = rc.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return 0, err
	}
	if err := runner.InstantiateHost(ctx, rt); err != nil {
		return 0, err
	}
	pol, err := policy.New(nil, nil)
	if err != nil {
		return 0, err
	}
	view, err := confine.New("/", confine.Auto, pol)
	if err != nil {
		return 0, err
	}
	defer view.Close()
	_, ctl := view.Mount()
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return 0, fmt.Errorf("compiling %s: %w", prog, err)
	}
	cfg := wazero.NewModuleConfig().
		WithArgs(append([]string{prog}, args...)...).
		WithStdin(os.Stdin).WithStdout(os.Stdout).WithStderr(os.Stderr).
		WithRandSource(rand.Reader).
		WithFSConfig(wazero.NewFSConfig().WithDirMount("/", "/")).
		WithSysNanosleep().WithSysNanotime().WithSysWalltime()
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			cfg = cfg.WithEnv(k, v)
		}
	}
	_, err = rt.InstantiateModule(runner.WithMount(ctx, ctl), compiled, cfg)
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return int(exit.ExitCode()), nil
	}
	return 0, err
}
