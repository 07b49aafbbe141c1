package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/runner"
)

// codeFiles lists the files in the wazero folders of dir.
func codeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	dirs, _ := os.ReadDir(dir)
	for _, d := range dirs {
		if !d.IsDir() || !strings.HasPrefix(d.Name(), "wazero-") {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(dir, d.Name()))
		for _, f := range files {
			out = append(out, filepath.Join(dir, d.Name(), f.Name()))
		}
	}
	return out
}

// compileInto compiles the guest through cacheDir, and closes it at the
// test's end.
func compileInto(t *testing.T, cacheDir string) *runner.Module {
	t.Helper()
	m, err := runner.Compile(context.Background(), cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// listsRoot checks that m's guest answers a call: a listing of a root
// holding one file.
func listsRoot(t *testing.T, m *runner.Module) {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "only.txt"), []byte("x\n"), 0o644)
	r, err := runner.Open(m, runner.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if resp := call(t, r, proto.ListDir, map[string]any{"path": "."}); resp.IsError || !strings.Contains(resp.Text, "only.txt") {
		t.Fatalf("the guest's listing: %q", resp.Text)
	}
}

// TestStubCache: a cold cache compiles the guest and files its code in
// the stub cache, one file, which is the code wazero's own cache keeps
// under the module's name (a second name of the same file); the next
// compile loads through the stub, and that guest answers; no private
// folder is left behind.
func TestStubCache(t *testing.T) {
	dir := t.TempDir()
	if m := compileInto(t, dir); runner.Stubbed(m) {
		t.Fatal("a cold cache loaded through the stub cache")
	}
	stubs := codeFiles(t, runner.StubsDir(dir))
	if len(stubs) != 1 {
		t.Fatalf("the stub cache holds %q, want one file", stubs)
	}
	own := codeFiles(t, filepath.Join(dir, "wazero"))
	if len(own) != 1 {
		t.Fatalf("wazero's cache holds %q, want one file", own)
	}
	a, errA := os.Stat(stubs[0])
	b, errB := os.Stat(own[0])
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Fatalf("the stub cache's file is not the module's code in wazero's cache (%v, %v)", errA, errB)
	}
	m := compileInto(t, dir)
	if !runner.Stubbed(m) {
		t.Fatal("a warm cache did not load through the stub cache")
	}
	listsRoot(t, m)
	if entries, _ := os.ReadDir(runner.StubsDir(dir)); len(entries) != 1 {
		t.Fatalf("the stub cache's folder holds %d entries, want its wazero folder alone", len(entries))
	}
}

// TestStubCacheMisses: the stub cache never serves another module's
// code, and never keeps a stub's own. Beside a file of another guest's
// code (here: garbage under another name, which a load must not open),
// the guest misses, is compiled and filed; the other file is untouched;
// and the stub cache holds no file but the two.
func TestStubCacheMisses(t *testing.T) {
	dir := t.TempDir()
	compileInto(t, dir)
	filed := codeFiles(t, runner.StubsDir(dir))
	if len(filed) != 1 {
		t.Fatalf("the stub cache holds %q", filed)
	}
	code, err := os.ReadFile(filed[0])
	if err != nil {
		t.Fatal(err)
	}
	// Another guest's code under the guest's name: the file moves aside
	// (another name), and garbage takes its place under a third.
	other := filepath.Join(filepath.Dir(filed[0]), strings.Repeat("0", 64))
	if err := os.Rename(filed[0], other); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(filepath.Dir(filed[0]), strings.Repeat("1", 64))
	os.WriteFile(garbage, []byte("garbage"), 0o600)
	m := compileInto(t, dir)
	if runner.Stubbed(m) {
		t.Fatal("loaded through the stub cache when the guest's file was gone")
	}
	listsRoot(t, m)
	now := codeFiles(t, runner.StubsDir(dir))
	if len(now) != 3 {
		t.Fatalf("after the miss the stub cache holds %q, want the two others and the guest's", now)
	}
	if b, _ := os.ReadFile(filed[0]); len(b) != len(code) {
		t.Fatalf("the guest's file is %d bytes after the miss, want its code's %d", len(b), len(code))
	}
	if b, _ := os.ReadFile(garbage); string(b) != "garbage" {
		t.Fatal("the miss changed another file")
	}
	if m := compileInto(t, dir); !runner.Stubbed(m) {
		t.Fatal("the guest's file, filed again, does not load")
	}
}

// TestStubCacheBroken: a stub cache whose file does not load (a
// truncated write) is cleared and filled again, and the guest answers.
func TestStubCacheBroken(t *testing.T) {
	dir := t.TempDir()
	compileInto(t, dir)
	filed := codeFiles(t, runner.StubsDir(dir))
	if len(filed) != 1 {
		t.Fatalf("the stub cache holds %q", filed)
	}
	// A new inode: the old one is also wazero's own cache's file.
	os.Remove(filed[0])
	if err := os.WriteFile(filed[0], []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := compileInto(t, dir)
	if runner.Stubbed(m) {
		t.Fatal("loaded through a broken stub cache")
	}
	listsRoot(t, m)
	if m := compileInto(t, dir); !runner.Stubbed(m) {
		t.Fatal("the stub cache was not filled again")
	}
}

// TestStubCacheSweeps: a private folder a killed process left in the
// stub cache is removed by the next filing once it is an hour old; a
// younger one (another process's, at work) is left alone.
func TestStubCacheSweeps(t *testing.T) {
	dir := t.TempDir()
	stubs := runner.StubsDir(dir)
	old, young := filepath.Join(stubs, "load-1"), filepath.Join(stubs, "install-2")
	for _, p := range []string{old, young} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	hourAgo := time.Now().Add(-61 * time.Minute)
	os.Chtimes(old, hourAgo, hourAgo)
	compileInto(t, dir)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a private folder an hour old is still there (%v)", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young private folder was removed: %v", err)
	}
}
