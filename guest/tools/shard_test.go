package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/wasifs"
)

// TestShardedGrepEqualsOne: splitting a grep over any number of shards and
// merging gives exactly the answer of one instance, caps and notices
// included.
func TestShardedGrepEqualsOne(t *testing.T) {
	root := shardTree(t)
	for _, fsys := range []fs.FS{os.DirFS(root), wasifs.New(root)} {
		testShardedGrepEqualsOne(t, fsys)
	}
}

// shardTree is the tree of TestShardedGrepEqualsOne: folders at the
// units' depth and below, files above it, notes, a wide folder.
func shardTree(t *testing.T) string {
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
	return root
}

// TestShardedGrepWeightsEqualsOne: whatever the host knows of the weight
// of the folders (proto.GrepShardArgs.Weights: units heavy enough to be
// split, chains of them, one inside a unit, files, names that are no
// folder, units of unequal weight), the merged answer is exactly one
// instance's, and every file is searched by one shard.
func TestShardedGrepWeightsEqualsOne(t *testing.T) {
	root := shardTree(t)
	const heavy = minSplit + 1
	fw := func(p string, n int64) proto.FolderWeight { return proto.FolderWeight{Path: p, Bytes: n} }
	sets := [][]proto.FolderWeight{
		{fw("d1/s1", heavy)},
		{fw("d4/s2", heavy), fw("d4/s2/deep", heavy), fw("d4/s2/deep/er", heavy)},
		{fw("d4/s2/deep", heavy)}, // inside a unit: not split
		{fw("d3/s0/f03.txt", heavy), fw("nope", heavy), fw("", heavy), fw(".", 1), fw("../x", heavy), fw("d2", heavy), fw("d1/s1/", heavy)},
		{fw("wide", heavy), fw("d0/s0", 1<<20), fw("d2/s1", 3<<19), fw("d5/s1", heavy), fw("d6/s0", -5)}, // d5/s1 has a note
		{fw(".", 1<<40), fw("d1/s1", heavy)}, // a tree so heavy that d1/s1 is light
		{{Path: "d1/s1", Bytes: heavy, Entries: 1 << 20}, {Path: "d2/s0", Bytes: heavy, Entries: 1}}, // d1/s1 has many entries for its weight
	}
	for _, fsys := range []fs.FS{os.DirFS(root), wasifs.New(root)} {
		for _, args := range []string{`{"pattern":"hit"}`, `{"pattern":"hit","max_results":7}`, `{"pattern":"hit","output_mode":"count"}`,
			`{"pattern":"hit","path":"d4"}`, `{"pattern":"deep","path":"d4/s2"}`, `{"pattern":"wide"}`} {
			for _, lim := range []proto.Limits{{}, {MaxResults: 5}} {
				one := Run(fsys, proto.Request{Tool: proto.Grep, Args: json.RawMessage(args), Limits: lim})
				for _, split := range sets {
					b, _ := json.Marshal(split)
					sargs := `{"weights":` + string(b) + `,` + args[1:]
					for n := 2; n <= 3; n++ {
						got, shards := runShards(t, fsys, proto.GrepShard, sargs, lim, n, MergeGrep)
						if got.Text != one.Text || got.IsError != one.IsError {
							t.Fatalf("%s %+v weights %v with %d shards:\n%s\nwant:\n%s", args, lim, split, n, got.Text, one.Text)
						}
						if lim.MaxResults == 0 && !strings.Contains(args, "max_results") {
							if p, k := searchedTwice(shards); k > 0 {
								t.Fatalf("%s weights %v: %s searched by %d shards", args, split, p, k)
							}
						}
						for _, order := range []string{"at once", "last first", "at once, dealt as reached", "last first, dealt as reached", "in turn, dealt as reached"} {
							if got, _ := runShardsJudged(t, fsys, sargs, lim, n, order); got.Text != one.Text || got.IsError != one.IsError {
								t.Fatalf("%s %+v weights %v with %d shards stopped by their progress (%s):\n%s\nwant:\n%s", args, lim, split, n, order, got.Text, one.Text)
							}
						}
					}
				}
			}
		}
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
				orders := []string{"at once", "in turn", "last first"}
				if n > 3 {
					orders = orders[:1] // the same walks as with 3, a third of the time
				}
				for _, order := range orders {
					if got, _ := runShardsJudged(t, fsys, args, lim, n, order); got.Text != one.Text || got.IsError != one.IsError {
						t.Fatalf("%s %+v with %d shards stopped by their progress (%s):\n%s\nwant:\n%s", args, lim, n, order, got.Text, one.Text)
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

func (s stopFS) WalkStop(proto.Progress) string { return s.at }

// judgedFS is a file system whose walkStopper reports to w, as the
// guest's moat.walk_stop reports to the host's proto.WalkStop.
type judgedFS struct {
	fs.FS
	w *proto.WalkStop
}

func (j judgedFS) WalkStop(p proto.Progress) string { return j.w.Report(p) }

func (j judgedFS) ClaimUnit(p string) (mine, ok bool) { return j.w.Claim(p) }

// runShardsJudged is runShards for grep with the shards' progress judged
// by StopJudge as host/fanout does (and a share's own stop posted when it
// answers): the shards in turn, the last first, or all at once, each
// with the folder units dealt as the shards reach them (UnitDeal, as
// host/fanout deals them) when order ends ", dealt as reached"; it
// answers the merged answer and the shares.
func runShardsJudged(t *testing.T, fsys fs.FS, args string, lim proto.Limits, n int, order string) (proto.Response, []proto.GrepShardResult) {
	t.Helper()
	w := &proto.WalkStop{Judge: StopJudge(proto.GrepShard, []byte(args), lim, n)}
	if o, ok := strings.CutSuffix(order, ", dealt as reached"); ok {
		order, w.Deal = o, UnitDeal(proto.GrepShard)
	}
	shards := make([]proto.GrepShardResult, n)
	resps := make([]proto.Response, n)
	run := func(s int) {
		a := fmt.Sprintf(`{"shard":%d,"shards":%d,%s`, s, n, args[1:])
		resps[s] = Run(judgedFS{fsys, w}, proto.Request{Tool: proto.GrepShard, Args: json.RawMessage(a), Limits: lim})
		if resps[s].IsError {
			return
		}
		if sh, err := DecodeShare(proto.GrepShard, s, proto.ShardJSON(resps[s])); err == nil {
			w.Post(sh.Stop())
		}
	}
	switch order {
	case "at once":
		var wg sync.WaitGroup
		for s := range n {
			wg.Go(func() { run(s) })
		}
		wg.Wait()
	case "last first":
		for s := n - 1; s >= 0; s-- {
			run(s)
		}
	default:
		for s := range n {
			run(s)
		}
	}
	for s, r := range resps {
		if r.IsError {
			return r, nil
		}
		if err := json.Unmarshal(proto.ShardJSON(r), &shards[s]); err != nil {
			t.Fatalf("shard %d of %d answered %q: %v", s, n, r.Text, err)
		}
	}
	return MergeGrep(json.RawMessage(args), lim, shards), shards
}

// TestStopJudgeStopsTheWalk: the shards' progress stops a shard's walk
// where the others' hits before it fill the answer, though its own hits
// do not fill its cap, and the answer is one instance's.
func TestStopJudgeStopsTheWalk(t *testing.T) {
	root := t.TempDir()
	for i := range 400 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i%20), fmt.Sprintf("s%d", i%4))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte("hit\n"), 0o644)
	}
	const args = `{"pattern":"hit","max_results":30}`
	one := Run(os.DirFS(root), proto.Request{Tool: proto.Grep, Args: json.RawMessage(args)})
	got, shards := runShardsJudged(t, os.DirFS(root), args, proto.Limits{}, 2, "in turn")
	if got.Text != one.Text {
		t.Fatalf("got:\n%s\nwant:\n%s", got.Text, one.Text)
	}
	// The first shard fills its own cap (30 hits); the second is stopped
	// by the first's progress before its own hits reach 30, near where
	// the merged answer is cut.
	if last := shards[1]; !last.More || len(last.Parts) >= 30 || len(last.Parts) == 0 {
		t.Fatalf("the second shard searched %d files (more %v, stopped at %q): not stopped by the first's progress", len(last.Parts), last.More, last.StopAt)
	}
	if !shards[0].More || len(shards[0].Parts) != 30 {
		t.Fatalf("the first shard: %d parts, more %v", len(shards[0].Parts), shards[0].More)
	}
}

// TestStopJudge: the stop is the least place a shard still walking has
// reached, once the hits (or bytes) every shard reported before it pass
// the cap; a shard not heard from holds it back, one whose walk ended
// does not, and a path that was not UTF-8 is no place.
func TestStopJudge(t *testing.T) {
	if StopJudge(proto.GlobShard, []byte(`{"pattern":"*"}`), proto.Limits{}, 2) != nil {
		t.Fatal("a judge for a glob's shares, which never stop early")
	}
	j := StopJudge(proto.GrepShard, []byte(`{"pattern":"x","max_results":7}`), proto.Limits{}, 2)
	steps := []struct {
		p    proto.Progress
		want string
	}{
		{proto.Progress{Shard: 0, At: "a/x", Hits: 3}, ""},    // shard 1 not heard from
		{proto.Progress{Shard: 1, At: "b", Hits: 5}, ""},      // before a/x: 3 (shard 1 has no report there)
		{proto.Progress{Shard: 0, At: "a-z", Hits: 6}, ""},    // before a-z (the least place): 6
		{proto.Progress{Shard: 1, At: "c/\xff", Hits: 9}, ""}, // not UTF-8: ignored
		{proto.Progress{Shard: 9, At: "z", Hits: 99}, ""},     // no such shard
	}
	for i, s := range steps {
		if got := j(s.p); got != s.want {
			t.Fatalf("step %d %+v: stop %q, want %q", i, s.p, got, s.want)
		}
	}
	// Least place now: b (shard 1's), before which shard 0 reported
	// 6 at a-z, shard 1 5 at b: 11 > 7.
	if got := j(proto.Progress{Shard: 0, At: "c", Hits: 7}); got != "b" {
		t.Fatalf("stop %q, want b", got)
	}
	// A shard whose walk ended no longer holds the place back.
	j = StopJudge(proto.GrepShard, []byte(`{"pattern":"x"}`), proto.Limits{MaxResults: 4}, 2)
	j(proto.Progress{Shard: 0, At: "a", Hits: 0})
	j(proto.Progress{Shard: 1, At: "b", Hits: 5})
	if got := j(proto.Progress{Shard: 0, At: "", Hits: 0}); got != "b" {
		t.Fatalf("after shard 0 ended: stop %q, want b", got)
	}
	// Past maxReports a shard's reports are not kept: its place stays
	// at the last one kept, and holds the stop back there (had the later
	// ones been kept, shard 1's hits at d/0065537 would make a stop).
	j = StopJudge(proto.GrepShard, []byte(`{"pattern":"x"}`), proto.Limits{MaxResults: 4}, 2)
	j(proto.Progress{Shard: 1, At: "a", Hits: 0})
	for i := range maxReports + 5 {
		if got := j(proto.Progress{Shard: 0, At: fmt.Sprintf("d/%07d", i), Hits: 0}); got != "" {
			t.Fatalf("report %d: stop %q with no hits", i, got)
		}
	}
	if got := j(proto.Progress{Shard: 1, At: fmt.Sprintf("d/%07d", maxReports+1), Hits: 9}); got != "" {
		t.Fatalf("past the bound: stop %q, want none before shard 0's last place kept", got)
	}
	// Bytes fill the answer too.
	j = StopJudge(proto.GrepShard, []byte(`{"pattern":"x"}`), proto.Limits{}, 2)
	j(proto.Progress{Shard: 1, At: "a", Hits: 0, Bytes: 1})
	j(proto.Progress{Shard: 0, At: "m", Hits: 1, Bytes: proto.MaxGrepBytes})
	if got := j(proto.Progress{Shard: 1, At: "n", Hits: 1, Bytes: 2}); got != "m" {
		t.Fatalf("bytes past the cap: stop %q, want m", got)
	}
}

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

// TestUnitDeal: a unit goes to the first shard to reach it, so a unit at
// or before the last one dealt is another's (the shards reach the units
// in walk order); only a grep's shards are dealt so.
func TestUnitDeal(t *testing.T) {
	if UnitDeal(proto.GlobShard) != nil {
		t.Fatal("a deal for a glob's shares, whose walk is in no fixed order")
	}
	deal := UnitDeal(proto.GrepShard)
	for _, c := range []struct {
		unit string
		want bool
	}{
		{"a/x", true},   // first reached
		{"a/x", false},  // the other shard, reaching it later
		{"a-b/c", true}, // after a/x in walk order (not in string order)
		{"a/y", false},  // before a-b/c: dealt already
		{"", false},     // no unit
		{"b/a", true},
		{"b/b", true},
	} {
		if got := deal(c.unit); got != c.want {
			t.Fatalf("deal(%q) = %v, want %v", c.unit, got, c.want)
		}
	}
}

// TestShardsTakeUnitsAsReached: with the units dealt as the shards reach
// them (UnitDeal), a shard that walks alone first takes every folder unit
// and the others only their files dealt by hash, all at once they share
// them, and either way the merged answer is one instance's and every file
// is searched by exactly one shard.
func TestShardsTakeUnitsAsReached(t *testing.T) {
	root := shardTree(t)
	fsys := os.DirFS(root)
	const args = `{"pattern":"hit"}`
	one := Run(fsys, proto.Request{Tool: proto.Grep, Args: json.RawMessage(args)})
	for _, order := range []string{"in turn, dealt as reached", "last first, dealt as reached", "at once, dealt as reached"} {
		got, shards := runShardsJudged(t, fsys, args, proto.Limits{}, 2, order)
		if got.Text != one.Text {
			t.Fatalf("%s:\n%s\nwant:\n%s", order, got.Text, one.Text)
		}
		if p, k := searchedTwice(shards); k > 0 {
			t.Fatalf("%s: %s searched by %d shards", order, p, k)
		}
		first, later := shards[0], shards[1]
		if strings.HasPrefix(order, "last first") {
			first, later = shards[1], shards[0]
		}
		if strings.HasPrefix(order, "at once") {
			continue
		}
		for _, p := range later.Parts {
			if strings.Count(p.Path, "/") >= shardDepth {
				t.Fatalf("%s: the shard that walked second searched %s, in a folder unit the first had reached", order, p.Path)
			}
		}
		if n := len(first.Parts); n < 40 {
			t.Fatalf("%s: the shard that walked first searched %d files, fewer than the 40 of its folder units", order, n)
		}
	}
}

// searchedTwice is a file that more than one of the shards searched, and
// by how many (0 when none was).
func searchedTwice(shards []proto.GrepShardResult) (string, int) {
	searched := map[string]int{}
	for _, r := range shards {
		for _, p := range r.Parts {
			searched[p.Path]++
		}
	}
	for p, k := range searched {
		if k > 1 {
			return p, k
		}
	}
	return "", 0
}
