package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/wasifs"
)

// TestShardedGrepEqualsOne: splitting a grep over any number of shards and
// merging gives exactly the answer of one instance, caps and notices
// included.
func TestShardedGrepEqualsOne(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 40; i++ {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i%7), fmt.Sprintf("s%d", i%3))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("hit %d\nmiss\nhit again %d\n", i, i)), 0o644)
	}
	os.WriteFile(filepath.Join(root, "d1-x.txt"), []byte("hit sibling\n"), 0o644) // walk order vs string order
	os.WriteFile(filepath.Join(root, "d2", "top.txt"), []byte("hit at depth 2\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "d4", "s2", "deep", "er"), 0o755)
	os.WriteFile(filepath.Join(root, "d4", "s2", "deep", "er", "x.txt"), []byte("hit deep\n"), 0o644)
	// Notes: an ignore file past its bounds in a folder every shard walks
	// and in one shard's unit.
	os.WriteFile(filepath.Join(root, "d3", ".gitignore"), bigIgnore().Data, 0o644)
	os.WriteFile(filepath.Join(root, "d5", "s1", ".gitignore"), bigIgnore().Data, 0o644)
	// A wide folder, whose files are units dealt by their hash, and left
	// out of the other shards' listings.
	os.MkdirAll(filepath.Join(root, "wide"), 0o755)
	for i := 0; i < 200; i++ {
		os.WriteFile(filepath.Join(root, "wide", fmt.Sprintf("w%03d.txt", i)), []byte(fmt.Sprintf("hit wide %d\n", i)), 0o644)
	}
	for _, fsys := range []fs.FS{os.DirFS(root), wasifs.New(root)} {
		testShardedGrepEqualsOne(t, fsys)
	}
}

func testShardedGrepEqualsOne(t *testing.T, fsys fs.FS) {
	for _, args := range []string{`{"pattern":"hit"}`, `{"pattern":"hit","max_results":7}`, `{"pattern":"nothing"}`, `{"pattern":"a(","path":"."}`, `{"pattern":"hit","path":"d3/s0/f03.txt"}`, `{"pattern":"hit","path":"d4"}`, `{"pattern":"deep","path":"d4/s2"}`, `{"pattern":"hit","path":"d3"}`, `{"pattern":"wide"}`} {
		for _, lim := range []proto.Limits{{}, {MaxResults: 5}} {
			one := Run(fsys, proto.Request{Tool: proto.Grep, Args: json.RawMessage(args), Limits: lim})
			for n := 2; n <= 5; n++ {
				got, shards := runShards(t, fsys, proto.GrepShard, args, lim, n, MergeGrep)
				if args == `{"pattern":"wide"}` && lim.MaxResults == 0 {
					for s, r := range shards {
						if len(r.Parts) < 200/n/2 {
							t.Errorf("shard %d of %d searched %d of the 200 wide files", s, n, len(r.Parts))
						}
					}
				}
				if got.Text != one.Text || got.IsError != one.IsError {
					t.Fatalf("%s %+v with %d shards:\n%s\nwant:\n%s", args, lim, n, got.Text, one.Text)
				}
				for _, backward := range []bool{false, true} {
					if got := runShardsStopped(t, fsys, args, lim, n, backward); got.Text != one.Text || got.IsError != one.IsError {
						t.Fatalf("%s %+v with %d shards stopping early (the last first: %v):\n%s\nwant:\n%s", args, lim, n, backward, got.Text, one.Text)
					}
				}
				if args == `{"pattern":"hit"}` && lim.MaxResults == 0 && !strings.HasSuffix(got.Text, "\n[d3/.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]\n[d5/s1/.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]") {
					t.Fatalf("no notes in:\n%s", got.Text)
				}
			}
		}
	}
}

// TestGrepShardArgs: a share that is not one of several is refused, not
// answered with no parts.
func TestGrepShardArgs(t *testing.T) {
	for _, a := range []string{`{"pattern":"x"}`, `{"pattern":"x","shard":0,"shards":1}`, `{"pattern":"x","shard":2,"shards":2}`, `{"pattern":"x","shard":-1,"shards":2}`} {
		r := Run(os.DirFS(t.TempDir()), proto.Request{Tool: proto.GrepShard, Args: json.RawMessage(a)})
		if !r.IsError || !strings.HasPrefix(r.Text, "error: invalid arguments for grep_shard") {
			t.Errorf("%s: %+v", a, r)
		}
	}
}

func TestWalkOrder(t *testing.T) {
	if walkOrder("a/b", "a-c") >= 0 || walkOrder("a", "a/b") >= 0 || walkOrder("a/b", "a/b") != 0 || walkOrder("b", "a/z") <= 0 {
		t.Fatal("walkOrder disagrees with fs.WalkDir")
	}
}

// TestShardedGlobEqualsOne: splitting a glob over any number of shards and
// merging gives exactly the answer of one instance: the cap, the count of
// the rest, folders above the units and folder units, the notes.
func TestShardedGlobEqualsOne(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 40; i++ {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i%7), fmt.Sprintf("s%d", i%3))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), nil, 0o644)
	}
	os.WriteFile(filepath.Join(root, "d1-x.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "d2", "top.go"), nil, 0o644)
	os.MkdirAll(filepath.Join(root, "d4", "s2", "deep", "er"), 0o755)
	os.WriteFile(filepath.Join(root, "d4", "s2", "deep", "er", "x.txt"), nil, 0o644)
	os.Symlink("d1", filepath.Join(root, "d5", "link"))
	os.WriteFile(filepath.Join(root, "d6", "bad\xffname.txt"), nil, 0o644) // not UTF-8: must survive the shard's JSON
	os.WriteFile(filepath.Join(root, "d3", ".gitignore"), bigIgnore().Data, 0o644)
	os.WriteFile(filepath.Join(root, "d5", "s1", ".gitignore"), bigIgnore().Data, 0o644)
	os.MkdirAll(filepath.Join(root, "wide"), 0o755)
	for i := 0; i < 200; i++ {
		os.WriteFile(filepath.Join(root, "wide", fmt.Sprintf("w%03d.txt", i)), nil, 0o644)
	}
	for _, fsys := range []fs.FS{os.DirFS(root), wasifs.New(root)} {
		for _, args := range []string{`{"pattern":"**"}`, `{"pattern":"**/*.txt"}`, `{"pattern":"**/s1/"}`, `{"pattern":"*"}`,
			`{"pattern":"**/w1*"}`, `{"pattern":"nothing"}`, `{"pattern":"**","path":"d4"}`, `{"pattern":"**/link"}`, `{"pattern":"a{"}`} {
			for _, lim := range []proto.Limits{{}, {MaxResults: 5}} {
				one := Run(fsys, proto.Request{Tool: proto.Glob, Args: json.RawMessage(args), Limits: lim})
				for n := 2; n <= 5; n++ {
					got, shards := runShards(t, fsys, proto.GlobShard, args, lim, n, MergeGlob)
					if got.Text != one.Text || got.IsError != one.IsError {
						t.Fatalf("%s %+v with %d shards:\n%s\nwant:\n%s", args, lim, n, got.Text, one.Text)
					}
					if args == `{"pattern":"**/*.txt"}` && lim.MaxResults == 0 {
						for s, r := range shards {
							if r.Total < 240/n/2 {
								t.Errorf("shard %d of %d matched %d of 241 files", s, n, r.Total)
							}
						}
						if !strings.Contains(got.Text, ".gitignore is larger than") {
							t.Fatalf("no notes in:\n%s", got.Text)
						}
					}
				}
			}
		}
	}
}

// runShards runs args as n shard calls of tool and merges them as the host
// does; a shard's error answer (every shard fails alike) is the answer.
func runShards[R any](t *testing.T, fsys fs.FS, tool, args string, lim proto.Limits, n int, merge func([]byte, proto.Limits, []R) proto.Response) (proto.Response, []R) {
	t.Helper()
	var shards []R
	for s := 0; s < n; s++ {
		a := fmt.Sprintf(`{"shard":%d,"shards":%d,%s`, s, n, args[1:])
		r := Run(fsys, proto.Request{Tool: tool, Args: json.RawMessage(a), Limits: lim})
		if r.IsError {
			return r, nil
		}
		var res R
		if err := json.Unmarshal(proto.ShardJSON(r), &res); err != nil {
			t.Fatalf("shard %d of %d answered %q: %v", s, n, r.Text, err)
		}
		shards = append(shards, res)
	}
	return merge(json.RawMessage(args), lim, shards), shards
}

// stopFS is a file system whose walkStopper says at.
type stopFS struct {
	fs.FS
	at string
}

func (s stopFS) WalkStop() string { return s.at }

// runShardsStopped is runShards for grep with each shard told where the
// shards before it stopped at their cap (the first such stop), as the
// host's proto.WalkStop tells a shard still walking: the shards in turn,
// or the last first (backward).
func runShardsStopped(t *testing.T, fsys fs.FS, args string, lim proto.Limits, n int, backward bool) proto.Response {
	t.Helper()
	shards := make([]proto.GrepShardResult, n)
	stop := ""
	for k := 0; k < n; k++ {
		s := k
		if backward {
			s = n - 1 - k
		}
		a := fmt.Sprintf(`{"shard":%d,"shards":%d,%s`, s, n, args[1:])
		r := Run(stopFS{fsys, stop}, proto.Request{Tool: proto.GrepShard, Args: json.RawMessage(a), Limits: lim})
		if r.IsError {
			return r
		}
		if err := json.Unmarshal(proto.ShardJSON(r), &shards[s]); err != nil {
			t.Fatalf("shard %d of %d answered %q: %v", s, n, r.Text, err)
		}
		if stop == "" && shards[s].More {
			stop = shards[s].StopAt
		}
	}
	return MergeGrep(json.RawMessage(args), lim, shards)
}

// DecodeShare and Merge take only the answers of a Shard tool, say which
// answer does not decode, and a share's stop is only a capped grep's at a
// path that was UTF-8.
func TestMergeRefuses(t *testing.T) {
	if _, err := Merge(proto.Grep, []byte(`{"pattern":"x"}`), proto.Limits{}, nil); err == nil {
		t.Error("merged the answers of grep, not of a shard tool")
	}
	if _, err := DecodeShare(proto.Grep, 0, []byte(`{}`)); err == nil {
		t.Error("decoded an answer of grep as a share")
	}
	if _, err := DecodeShare(proto.GlobShard, 1, []byte(`{`)); err == nil || !strings.Contains(err.Error(), "malformed answer of glob_shard 1") {
		t.Errorf("a malformed second answer: %v", err)
	}
	grep, err := DecodeShare(proto.GrepShard, 0, []byte(`{"more":true,"stop_at":"a/b.go"}`))
	if err != nil || grep.Stop() != "a/b.go" {
		t.Errorf("a grep share at its cap: stop %q, %v", grep.Stop(), err)
	}
	if _, err := Merge(proto.GlobShard, []byte(`{"pattern":"*"}`), proto.Limits{}, []Share{grep}); err == nil {
		t.Error("merged a grep share as a glob's")
	}
	if s, _ := DecodeShare(proto.GrepShard, 0, []byte(`{"more":true,"stop_at":"a/\ufffd.go"}`)); s.Stop() != "" {
		t.Errorf("a stop at a path that was not UTF-8: %q", s.Stop())
	}
	if s, _ := DecodeShare(proto.GrepShard, 0, []byte(`{"stop_at":"a/b.go"}`)); s.Stop() != "" {
		t.Errorf("a stop from a share that did not reach its cap: %q", s.Stop())
	}
}
