package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/confine/confinetest"
	"github.com/moatdev/moat/host/runner"
)

// cacheDir is shared by the tests of this package so the guest is compiled
// once per run, not once per test.
func cacheDir(t testing.TB) string {
	d := filepath.Join(os.TempDir(), "moat-test-cache-"+runtime.Version())
	os.MkdirAll(d, 0o755)
	return d
}

// module is compiled once for the whole test binary.
var module = sync.OnceValues(func() (*runner.Module, error) {
	return runner.Compile(context.Background(), filepath.Join(os.TempDir(), "moat-test-cache-"+runtime.Version()))
})

func newRunner(t testing.TB, root string, k confine.Kind) *runner.Runner {
	t.Helper()
	m, err := module()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.Open(m, runner.Config{Root: root, Resolver: k, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func call(t testing.TB, r *runner.Runner, tool string, args any) proto.Response {
	t.Helper()
	b, _ := json.Marshal(args)
	resp, err := r.Exec(context.Background(), proto.Request{ID: 7, Tool: tool, Args: b})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, b, err)
	}
	return resp
}

func kinds() []confine.Kind {
	if runtime.GOOS == "linux" {
		return []confine.Kind{confine.Root, confine.Openat2}
	}
	return []confine.Kind{confine.Root}
}

// TestEscapeTableEveryTool runs the shared escape table through every tool
// in the real guest, with each resolver, plus the control without
// confinement.
func TestEscapeTableEveryTool(t *testing.T) {
	for _, c := range confinetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			root := confinetest.Build(t, c)
			for _, k := range kinds() {
				got := confinetest.EveryTool(t, newRunner(t, root, k), c.Open)
				if strings.Contains(got, confinetest.Secret) {
					t.Fatalf("%v: secret leaked through a tool:\n%s", k, got)
				}
				if c.Inside != "" && !strings.Contains(got, "read_file: "+c.Inside) {
					t.Fatalf("%v: inside read failed:\n%s", k, got)
				}
			}
			// The guest refuses ".." by itself, so the control can only
			// show the escape for paths without it.
			if c.Escapes && !strings.Contains(c.Open, "..") {
				got := call(t, newRunner(t, root, confine.Unconfined), proto.ReadFile, map[string]any{"path": c.Open}).Text
				if !strings.Contains(got, confinetest.Secret) {
					t.Fatalf("control: without confinement read_file %s should leak, got %q", c.Open, got)
				}
			}
		})
	}
}

func TestTimeoutIsAnErrorAndRecovers(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("abcdefghij klmnopqrstuvwxyz 0123456789\n", 1<<20) // 40 MB
	os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o644)
	r, err := runner.New(context.Background(), runner.Config{Root: root, CacheDir: cacheDir(t), Timeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Exec(context.Background(), proto.Request{ID: 1, Tool: proto.Grep, Args: []byte(`{"pattern":"z{3}q"}`)})
	if !errors.Is(err, runner.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestCorruptCacheIsRebuilt(t *testing.T) {
	cache := t.TempDir()
	cfg := runner.Config{Root: t.TempDir(), CacheDir: cache}
	r, err := runner.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	n := 0
	filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			os.WriteFile(p, []byte("garbage"), 0o644)
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("the cache wrote no files")
	}
	r, err = runner.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("corrupt cache was fatal: %v", err)
	}
	defer r.Close()
	if resp := call(t, r, proto.ListDir, map[string]any{"path": "."}); resp.IsError {
		t.Fatalf("after rebuild: %q", resp.Text)
	}
}

// TestConcurrentCalls: calls at once each get an instance of their own, or
// wait for one, and every answer is right.
func TestConcurrentCalls(t *testing.T) {
	root := confinetest.Build(t, confinetest.Case{Layout: []string{"ROOT/a.txt: alpha"}})
	r := newRunner(t, root, confine.Auto)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if got := call(t, r, proto.ReadFile, map[string]any{"path": "a.txt"}).Text; got != "alpha" {
					t.Errorf("got %q", got)
				}
			}
		}()
	}
	wg.Wait()
}

// TestRaceThroughGuest re-points a symlinked folder between inside and
// outside while the guest reads and greps through it.
func TestRaceThroughGuest(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.String(), func(t *testing.T) {
			root := confinetest.Build(t, confinetest.Case{Layout: []string{
				"ROOT/in/", "ROOT/in/f: inside", "outside/f: " + confinetest.Secret, "ROOT/d => in"}})
			r := newRunner(t, root, k)
			stop := confinetest.Repoint(root, "d", "in", "../outside")
			defer stop()
			deadline := time.Now().Add(time.Second)
			for n := 0; time.Now().Before(deadline) || n < 300; n++ {
				for _, c := range []struct {
					tool string
					args any
				}{{proto.ReadFile, map[string]any{"path": "d/f"}}, {proto.Grep, map[string]any{"pattern": ".", "path": "d"}}} {
					if got := call(t, r, c.tool, c.args).Text; strings.Contains(got, confinetest.Secret) {
						t.Fatalf("%s leaked outside content on try %d: %q", c.tool, n, got)
					}
				}
			}
		})
	}
}

// BenchmarkCallInSession is one call in a guest already up, by tool (each
// file's redacted view on, as moat runs it): "none" is a tool the guest
// does not have, answered at once, the round trip to the guest and back
// alone; read_file reads a 2 KB file, stat describes it.
//
//	go test ./host/runner -run XX -bench CallInSession -count 5
func BenchmarkCallInSession(b *testing.B) {
	root := confinetest.Build(b, confinetest.Case{Layout: []string{"ROOT/a.txt: alpha", "ROOT/b/", "ROOT/b/c.txt"}})
	if err := os.WriteFile(filepath.Join(root, "notes.md"), []byte(strings.Repeat("A line of notes, about forty bytes long.\n", 50)), 0o644); err != nil {
		b.Fatal(err)
	}
	r := newRunner(b, root, confine.Auto)
	for _, c := range []struct{ tool, args string }{
		{"none", `{}`},
		{proto.ListDir, `{"path":"."}`},
		{proto.ReadFile, `{"path":"notes.md"}`},
		{proto.Stat, `{"path":"notes.md"}`},
	} {
		b.Run(c.tool, func(b *testing.B) {
			args := []byte(c.args)
			r.Exec(context.Background(), proto.Request{ID: 1, Tool: c.tool, Args: args})
			for b.Loop() {
				if _, err := r.Exec(context.Background(), proto.Request{ID: 2, Tool: c.tool, Args: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCacheWarm: a cache holding only another guest is cold; after a
// compile into it, it is warm. (The isolated child gets the cache read-only
// and must never be left to compile the guest at every start.)
func TestCacheWarm(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "wazero", "wazero-v1.12.0-"+runtime.GOARCH+"-"+runtime.GOOS), 0o755)
	os.WriteFile(filepath.Join(dir, "wazero", "wazero-v1.12.0-"+runtime.GOARCH+"-"+runtime.GOOS, "an-older-guest"), []byte("x"), 0o644)
	if runner.CacheWarm(dir) {
		t.Fatal("a cache with only another guest's code counts as warm")
	}
	m, err := runner.Compile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
	if !runner.CacheWarm(dir) {
		t.Fatal("cache not warm after compiling into it")
	}
}

// TestCallAfterClose: a closed runner refuses calls, whichever instance
// they would have had, and closing twice is fine.
func TestCallAfterClose(t *testing.T) {
	r := newRunner(t, t.TempDir(), confine.Auto)
	call(t, r, proto.Stat, map[string]any{"path": "."})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for range r.Parallel() + 1 {
		if _, err := r.Exec(context.Background(), proto.Request{ID: 1, Tool: proto.Stat, Args: []byte(`{"path":"."}`)}); !errors.Is(err, runner.ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCompileKeepsGCSettings: loading from a warm cache holds collections
// back while it runs, and puts the process's settings back after.
func TestCompileKeepsGCSettings(t *testing.T) {
	dir := t.TempDir()
	for _, warm := range []bool{false, true} {
		pct := debug.SetGCPercent(150)
		limit := debug.SetMemoryLimit(1 << 40)
		m, err := runner.Compile(context.Background(), dir)
		gotPct, gotLimit := debug.SetGCPercent(pct), debug.SetMemoryLimit(limit)
		if err != nil {
			t.Fatal(err)
		}
		m.Close(context.Background())
		if gotPct != 150 || gotLimit != 1<<40 {
			t.Errorf("warm cache %v: after Compile, GC percent %d and memory limit %d, want 150 and %d", warm, gotPct, gotLimit, int64(1<<40))
		}
		if !runner.CacheWarm(dir) {
			t.Fatal("cache not warm after compiling into it")
		}
	}
}

// TestEscapeTableTwoRoots runs the shared escape table through every
// tool in the real guest with two roots, ROOT and OTHER (whose files
// hold the secret), each first in turn: the tools are asked about ROOT's
// names and walk ROOT, and no path or link leads them into OTHER.
func TestEscapeTableTwoRoots(t *testing.T) {
	m, err := module()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range confinetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			if confinetest.CrossDotDot(c) {
				t.Skip("leaves ROOT by a lexical \"..\", which the engine refuses (host/engine TestCrossRootDotDot) and the guest cleans to OTHER's own name")
			}
			for _, otherFirst := range []bool{false, true} {
				roots := confinetest.BuildTwo(t, c, otherFirst)
				for _, k := range kinds() {
					r, err := runner.Open(m, runner.Config{Roots: confinetest.Dirs(t, roots), Resolver: k, Timeout: 20 * time.Second})
					if err != nil {
						t.Fatal(err)
					}
					got := confinetest.EveryToolIn(t, r, confinetest.TwoRootName(c), "ROOT")
					r.Close()
					if strings.Contains(got, confinetest.Secret) {
						t.Fatalf("%v, other first %v: secret leaked through a tool:\n%s", k, otherFirst, got)
					}
					if c.Inside != "" && !strings.Contains(got, "read_file: "+c.Inside) {
						t.Fatalf("%v: inside read failed:\n%s", k, got)
					}
				}
			}
		})
	}
}

// TestTwoRootsTop: list_dir of the top lists the roots, grep and glob of
// the top walk both, and each answer names files label/path.
func TestTwoRootsTop(t *testing.T) {
	base := t.TempDir()
	for _, f := range []string{"a/src/x.go", "b/src/y.go"} {
		os.MkdirAll(filepath.Join(base, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(base, f), []byte("package x // TODO "+f+"\n"), 0o644)
	}
	m, err := module()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.Open(m, runner.Config{Roots: []confine.Dir{{Label: "a", Path: filepath.Join(base, "a")}, {Label: "b", Path: filepath.Join(base, "b")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{proto.ListDir, map[string]any{"path": "."}, "a/\nb/"},
		{proto.Grep, map[string]any{"pattern": "TODO", "output_mode": "files_with_matches"}, "a/src/x.go\nb/src/y.go"},
		{proto.Glob, map[string]any{"pattern": "**/*.go"}, "a/src/x.go\nb/src/y.go"},
		{proto.ReadFile, map[string]any{"path": "b/src/y.go"}, "package x // TODO b/src/y.go"},
	} {
		if got := call(t, r, c.tool, c.args).Text; !strings.Contains(got, c.want) {
			t.Errorf("%s %v = %q, want it to hold %q", c.tool, c.args, got, c.want)
		}
	}
}
