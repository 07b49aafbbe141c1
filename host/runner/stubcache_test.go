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

// TestStubCache follows one cache folder through the stub cache's life,
// step by step (each compiles the guest cold at most once, which under
// -race takes seconds):
//
//   - cold: the guest is compiled and its code filed, one file, which is
//     also the code wazero's own cache keeps under the module's name (a
//     second name of the same file);
//   - warm: the next compile loads through the stub, that guest answers,
//     and no private folder is left behind;
//   - read-only (Linux): see readOnlySteps;
//   - refill: with the guest's file moved to another name (another
//     guest's code, as far as a load can tell) beside garbage under a
//     third, which a load must not open, the guest misses, and its file
//     is filed again from wazero's own cache, nothing compiled: the same
//     file under three names; the other files are untouched;
//   - a miss: with the guest's file gone from both caches, the guest is
//     compiled and filed again; the stub cache never keeps a stub's own
//     code; the load removes a private folder a killed process left an
//     hour ago, not a younger one;
//   - broken: a file that does not load (a truncated write) is cleared
//     and filed again from wazero's own cache, and the guest answers.
func TestStubCache(t *testing.T) {
	dir := t.TempDir()
	stubs := runner.StubsDir(dir)
	var filed string
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"cold", func(t *testing.T) {
			if m := compileInto(t, dir); runner.Stubbed(m) {
				t.Fatal("a cold cache loaded through the stub cache")
			}
			files := codeFiles(t, stubs)
			if len(files) != 1 {
				t.Fatalf("the stub cache holds %q, want one file", files)
			}
			filed = files[0]
			own := codeFiles(t, filepath.Join(dir, "wazero"))
			if len(own) != 1 {
				t.Fatalf("wazero's cache holds %q, want one file", own)
			}
			a, errA := os.Stat(filed)
			b, errB := os.Stat(own[0])
			if errA != nil || errB != nil || !os.SameFile(a, b) {
				t.Fatalf("the stub cache's file is not the module's code in wazero's cache (%v, %v)", errA, errB)
			}
		}},
		{"warm", func(t *testing.T) {
			if !runner.CacheWarm(dir) {
				t.Fatal("the cache is not warm after the guest was filed")
			}
			m := compileInto(t, dir)
			if !runner.Stubbed(m) {
				t.Fatal("a warm cache did not load through the stub cache")
			}
			listsRoot(t, m)
			entries, _ := os.ReadDir(stubs)
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "wazero-") && e.Name() != "names" {
					t.Errorf("the stub cache's folder holds %s, a private folder left behind", e.Name())
				}
			}
		}},
		{"read-only", func(t *testing.T) { readOnlySteps(t, dir) }},
		{"refill", func(t *testing.T) {
			other := filepath.Join(filepath.Dir(filed), strings.Repeat("0", 64))
			if err := os.Rename(filed, other); err != nil {
				t.Fatal(err)
			}
			if runner.CacheWarm(dir) {
				t.Error("the cache counts as warm with the guest's file gone from the stub cache")
			}
			garbage := filepath.Join(filepath.Dir(filed), strings.Repeat("1", 64))
			os.WriteFile(garbage, []byte("garbage"), 0o600)
			m := compileInto(t, dir)
			if !runner.Stubbed(m) {
				t.Fatal("the guest's file was not filed again from wazero's cache")
			}
			listsRoot(t, m)
			own := codeFiles(t, filepath.Join(dir, "wazero"))
			a, errA := os.Stat(filed)
			b, errB := os.Stat(other)
			c, errC := os.Stat(own[0])
			if errA != nil || errB != nil || errC != nil || !os.SameFile(a, b) || !os.SameFile(a, c) {
				t.Fatalf("the file filed again is not the one code under three names (%v, %v, %v)", errA, errB, errC)
			}
			if bs, _ := os.ReadFile(garbage); string(bs) != "garbage" {
				t.Fatal("the refill changed another file")
			}
			os.Remove(other)
			os.Remove(garbage)
		}},
		{"miss", func(t *testing.T) {
			code, err := os.Stat(filed)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range append(codeFiles(t, filepath.Join(dir, "wazero")), filed) {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
			old, young := filepath.Join(stubs, "load-1"), filepath.Join(stubs, "install-2")
			for _, p := range []string{old, young} {
				if err := os.MkdirAll(p, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			hourAgo := time.Now().Add(-61 * time.Minute)
			os.Chtimes(old, hourAgo, hourAgo)

			m := compileInto(t, dir)
			if runner.Stubbed(m) {
				t.Fatal("loaded through the stub cache when the guest's code was in neither cache")
			}
			listsRoot(t, m)
			if now := codeFiles(t, stubs); len(now) != 1 || now[0] != filed {
				t.Fatalf("after the miss the stub cache holds %q, want the guest's file alone", now)
			}
			if fi, err := os.Stat(filed); err != nil || fi.Size() != code.Size() {
				t.Fatalf("the guest's file after the miss: %v, want its code's %d bytes", err, code.Size())
			}
			if _, err := os.Stat(old); !os.IsNotExist(err) {
				t.Errorf("a private folder an hour old is still there (%v)", err)
			}
			if _, err := os.Stat(young); err != nil {
				t.Errorf("a young private folder was removed: %v", err)
			}
			os.Remove(young)
			if m := compileInto(t, dir); !runner.Stubbed(m) {
				t.Fatal("the guest's file, filed again, does not load")
			}
		}},
		{"broken", func(t *testing.T) {
			// A new inode: the old one is also wazero's own cache's file.
			os.Remove(filed)
			if err := os.WriteFile(filed, []byte("garbage"), 0o600); err != nil {
				t.Fatal(err)
			}
			m := compileInto(t, dir)
			if !runner.Stubbed(m) {
				t.Fatal("a broken file was not cleared and filed again from wazero's cache")
			}
			listsRoot(t, m)
			if fi, err := os.Stat(filed); err != nil || fi.Size() < 1<<20 {
				t.Fatalf("the guest's file after the refill: %v", err)
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			return // the next steps start from this one's end
		}
	}
}
