package fanout_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/fanout"
	"github.com/moatdev/moat/host/runner"
)

// native runs the guest's tool code in this process, as the guest would:
// an executor whose calls can run at once.
type native struct {
	fsys  fs.FS
	calls atomic.Int32
	err   error
}

func (n *native) Exec(_ context.Context, req proto.Request) (proto.Response, error) {
	n.calls.Add(1)
	if n.err != nil && (req.Tool == proto.GrepShard || req.Tool == proto.GlobShard) && strings.Contains(string(req.Args), `"shard":1`) {
		return proto.Response{}, n.err
	}
	return tools.Run(n.fsys, req), nil
}

func (n *native) Close() error { return nil }

func tree(t *testing.T) string {
	root := t.TempDir()
	for i := 0; i < 40; i++ {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i%7), fmt.Sprintf("s%d", i%3))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("hit %d\nmiss\nhit again %d\n", i, i)), 0o644)
	}
	os.WriteFile(filepath.Join(root, "d1-x.txt"), []byte("hit sibling\n"), 0o644)
	os.WriteFile(filepath.Join(root, "d2", "bytes.txt"), []byte("hit \xfe invalid UTF-8\n"), 0o644)
	// An ignore file past the guest's bounds makes a note, in a folder
	// every shard walks and in one shard's share.
	big := "*.skip\n" + strings.Repeat("/a-long-folder-name-for-padding-the-ignore-file-out/*.tmp\n", 5000)
	os.WriteFile(filepath.Join(root, "d3", ".gitignore"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(root, "d5", "s1", ".gitignore"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(root, "d5", "s1", "f.skip"), []byte("hit ignored\n"), 0o644)
	return root
}

var grepArgs = []string{`{"pattern":"hit"}`, `{"pattern":"hit","max_results":7}`, `{"pattern":"nothing"}`,
	`{"pattern":"a(","path":"."}`, `{"pattern":"hit","path":"d3/s0/f03.txt"}`, `{"pattern":"hit","path":"d4"}`,
	`{"glob":"*.txt","pattern":"again","ignore_case":true}`, `{"pattern":"x","path":"nope"}`}

var globArgs = []string{`{"pattern":"**"}`, `{"pattern":"**/*.txt"}`, `{"pattern":"**/s1/"}`, `{"pattern":"d4/**"}`,
	`{"pattern":"a{"}`, `{"pattern":"*","path":"nope"}`}

// calls is each split tool's arguments to try.
var calls = []struct {
	tool string
	args []string
}{{proto.Grep, grepArgs}, {proto.Glob, globArgs}}

// TestSplitEqualsOne: a grep or glob through the decorator answers
// exactly as one call does, error answers included, and other tools pass
// through.
func TestSplitEqualsOne(t *testing.T) {
	n := &native{fsys: os.DirFS(tree(t))}
	for shards := 2; shards <= 5; shards++ {
		ex := fanout.New(n, shards)
		for _, c := range calls {
			for _, args := range c.args {
				for _, lim := range []proto.Limits{{}, {MaxResults: 5}} {
					req := proto.Request{ID: 9, Tool: c.tool, Args: json.RawMessage(args), Limits: lim}
					want := received(t, tools.Run(n.fsys, req))
					before := n.calls.Load()
					got, err := ex.Exec(context.Background(), req)
					if err != nil || got.Text != want.Text || got.IsError != want.IsError || got.ID != want.ID || len(got.Shard) > 0 {
						t.Fatalf("%s %s %+v, %d shards: %+v, %v\nwant %+v", c.tool, args, lim, shards, got, err, want)
					}
					if args == c.args[0] && lim.MaxResults == 0 && !strings.Contains(got.Text, "\n[d5/s1/.gitignore is larger than 256 KiB") {
						t.Fatalf("%s %s: no note of d5/s1/.gitignore in:\n%s", c.tool, args, got.Text)
					}
					if calls := n.calls.Load() - before; calls != int32(shards) {
						t.Fatalf("%s %s: %d calls for %d shards", c.tool, args, calls, shards)
					}
				}
			}
		}
		req := proto.Request{ID: 3, Tool: proto.ListDir, Args: json.RawMessage(`{"path":"."}`)}
		if got, err := ex.Exec(context.Background(), req); err != nil || !reflect.DeepEqual(got, tools.Run(n.fsys, req)) {
			t.Fatalf("list_dir through the decorator: %+v %v", got, err)
		}
	}
	if fanout.New(n, 1) != engine.Executor(n) {
		t.Error("one shard should be no decorator")
	}
}

// received is resp as the host receives it from a guest: through the
// wire, where invalid UTF-8 becomes U+FFFD.
func received(t *testing.T, resp proto.Response) proto.Response {
	var out proto.Response
	if err := json.Unmarshal(proto.AppendResponse(nil, &resp), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShardErrorIsTheCallsError: when a shard gets no answer, neither does
// the grep or glob.
func TestShardErrorIsTheCallsError(t *testing.T) {
	boom := errors.New("boom")
	n := &native{fsys: os.DirFS(tree(t)), err: boom}
	for _, c := range calls {
		_, err := fanout.New(n, 3).Exec(context.Background(), proto.Request{ID: 1, Tool: c.tool, Args: json.RawMessage(c.args[0])})
		if !errors.Is(err, boom) {
			t.Fatalf("%s: got %v", c.tool, err)
		}
	}
}

// TestThroughRunner runs the split grep and glob in real guest instances of one
// runner, against one instance's answer.
func TestThroughRunner(t *testing.T) {
	ctx := context.Background()
	r := guestRunner(t, 3)
	ex := fanout.New(r, r.Parallel())
	defer ex.Close()
	for _, c := range calls {
		for _, args := range c.args {
			req := proto.Request{ID: 4, Tool: c.tool, Args: json.RawMessage(args)}
			want, err := r.Exec(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ex.Exec(ctx, req)
			if err != nil || got.Text != want.Text || got.IsError != want.IsError || got.ID != want.ID || len(got.Shard) > 0 {
				t.Fatalf("%s %s: %+v, %v\nwant %+v", c.tool, args, got, err, want)
			}
		}
	}
}

// TestWalkStopThroughRunner: a shard whose call carries a posted
// proto.WalkStop (moat.walk_stop, asked by the guest as it walks) stops
// at the first entry past it, with every hit before it that it has
// without one; a call without one walks on.
func TestWalkStopThroughRunner(t *testing.T) {
	ctx := context.Background()
	r := guestRunner(t, 1)
	defer r.Close()
	const stop = "d2/s1/f09.txt"
	req := proto.Request{ID: 1, Tool: proto.GrepShard, Args: json.RawMessage(`{"pattern":"hit","shard":0,"shards":2}`)}
	shard := func(ctx context.Context) proto.GrepShardResult {
		t.Helper()
		return execShard(t, r, ctx, req)
	}
	all := shard(ctx)
	w := &proto.WalkStop{}
	w.Post(stop)
	got := shard(proto.WithWalkStop(ctx, w))
	var before []proto.GrepPart
	for _, p := range all.Parts {
		if p.Path < stop {
			before = append(before, p)
		}
	}
	if all.More || len(before) == 0 || len(before) == len(all.Parts) {
		t.Fatalf("the tree does not test a stop: %d parts, %d before %s, more %v", len(all.Parts), len(before), stop, all.More)
	}
	if !got.More || got.StopAt <= stop || !strings.HasPrefix(got.StopAt, "d") || !reflect.DeepEqual(got.Parts, before) {
		t.Fatalf("stopped at %q (more %v) with parts %+v\nwant those before %s: %+v", got.StopAt, got.More, got.Parts, stop, before)
	}
	if again := shard(ctx); !reflect.DeepEqual(again, all) {
		t.Fatalf("the next call, without a stop, answered %+v\nwant %+v", again, all)
	}
}

// TestWalkStopProgressThroughRunner: a shard's walk reports its progress
// to the call's proto.WalkStop (moat.walk_stop) as it walks, in walk
// order, its hits so far with each place, and that its walk ended; and
// a stop its Judge makes stops the walk there.
func TestWalkStopProgressThroughRunner(t *testing.T) {
	ctx := context.Background()
	r := guestRunner(t, 1)
	defer r.Close()
	req := proto.Request{ID: 1, Tool: proto.GrepShard, Args: json.RawMessage(`{"pattern":"hit","shard":1,"shards":2}`)}
	shard := func(w *proto.WalkStop) proto.GrepShardResult {
		t.Helper()
		return execShard(t, r, proto.WithWalkStop(ctx, w), req)
	}
	var got []proto.Progress
	all := shard(&proto.WalkStop{Judge: func(p proto.Progress) string { got = append(got, p); return "" }})
	hits := 0
	for _, p := range all.Parts {
		hits += p.Hits
	}
	if len(got) < 3 {
		t.Fatalf("%d reports: %+v", len(got), got)
	}
	for i, p := range got {
		if p.Shard != 1 || i > 0 && p.At != "" && (p.At <= got[i-1].At || p.Hits < got[i-1].Hits) {
			t.Fatalf("report %d out of order: %+v", i, got)
		}
	}
	if end := got[len(got)-1]; end.At != "" || end.Hits != hits || all.More {
		t.Fatalf("the last report %+v, want the walk's end with %d hits (more %v)", end, hits, all.More)
	}
	// A stop the judge makes at the second report's place.
	at := got[1].At
	stopped := shard(&proto.WalkStop{Judge: func(p proto.Progress) string {
		if p.At == at {
			return at
		}
		return ""
	}})
	if !stopped.More || stopped.StopAt <= at {
		t.Fatalf("stopped at %q (more %v), want past %q", stopped.StopAt, stopped.More, at)
	}
}

// TestClaimUnitThroughRunner: a shard asks the call's proto.WalkStop for
// each folder unit it reaches (moat.claim_unit), in walk order, and walks
// those its Deal gives it and no other: given none, it searches only the
// files at the top dealt to it by their hash; given all, every file of its
// folder units; and a call whose WalkStop has no Deal deals by itself.
func TestClaimUnitThroughRunner(t *testing.T) {
	ctx := context.Background()
	r := guestRunner(t, 1)
	defer r.Close()
	req := proto.Request{ID: 1, Tool: proto.GrepShard, Args: json.RawMessage(`{"pattern":"hit","shard":1,"shards":2}`)}
	shard := func(w *proto.WalkStop) proto.GrepShardResult {
		t.Helper()
		return execShard(t, r, proto.WithWalkStop(ctx, w), req)
	}
	inUnits := func(res proto.GrepShardResult) (n int) {
		for _, p := range res.Parts {
			if strings.Count(p.Path, "/") >= 2 {
				n++
			}
		}
		return n
	}
	var asked []string
	none := shard(&proto.WalkStop{Deal: func(u string) bool { asked = append(asked, u); return false }})
	if len(asked) < 2 || !slices.IsSorted(asked) {
		t.Fatalf("units asked for: %q", asked)
	}
	if n := inUnits(none); n != 0 {
		t.Fatalf("given no unit, the shard searched %d files in folder units: %+v", n, none.Parts)
	}
	all := shard(&proto.WalkStop{Deal: func(string) bool { return true }})
	self := shard(&proto.WalkStop{})
	if n, m := inUnits(all), inUnits(self); n <= m || m == 0 {
		t.Fatalf("given every unit the shard searched %d files in them, dealing by itself %d", n, m)
	}
}

// execShard runs the grep_shard call req on r and decodes its answer.
func execShard(t *testing.T, r *runner.Runner, ctx context.Context, req proto.Request) proto.GrepShardResult {
	t.Helper()
	resp, err := r.Exec(ctx, req)
	if err != nil || resp.IsError {
		t.Fatalf("%+v %v", resp, err)
	}
	var res proto.GrepShardResult
	if err := json.Unmarshal(proto.ShardJSON(resp), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// guestRunner is a runner of parallel real guest instances over tree(t);
// it skips a -short run, which does not compile the guest.
func guestRunner(t *testing.T, parallel int) *runner.Runner {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the guest")
	}
	ctx := context.Background()
	m, err := runner.Compile(ctx, filepath.Join(os.TempDir(), "moat-test-cache-"+runtime.Version()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	r, err := runner.Open(m, runner.Config{Root: tree(t), Resolver: confine.Auto, Timeout: time.Minute, Parallel: parallel})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recorder is native, keeping the arguments of each shard call.
type recorder struct {
	native
	mu   sync.Mutex
	args []proto.GrepShardArgs
}

func (r *recorder) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	if req.Tool == proto.GrepShard {
		var a proto.GrepShardArgs
		json.Unmarshal(req.Args, &a)
		r.mu.Lock()
		r.args = append(r.args, a)
		r.mu.Unlock()
	}
	return r.native.Exec(ctx, req)
}

// TestSplitLearnsWeights: the shares' weights of one grep are sent to the
// shares of the next over the same tree (and none a model sends), and the
// heavy folder they name is then searched by every shard, with the same
// answer.
func TestSplitLearnsWeights(t *testing.T) {
	root := t.TempDir()
	heavy := filepath.Join(root, "a", "heavy")
	os.MkdirAll(heavy, 0o755)
	block := strings.Repeat("filler line of text\n", 4<<10) // 80 KiB
	for i := range 40 {
		os.WriteFile(filepath.Join(heavy, fmt.Sprintf("h%02d.txt", i)), []byte("hit heavy\n"+block), 0o644)
	}
	for i := range 6 {
		dir := filepath.Join(root, "b", fmt.Sprintf("l%d", i))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "l.txt"), []byte("hit light\n"), 0o644)
	}
	r := &recorder{native: native{fsys: os.DirFS(root)}}
	ex := fanout.New(r, 2)
	req := proto.Request{Tool: proto.Grep, Args: json.RawMessage(`{"pattern":"hit","weights":[{"path":"b","bytes":99999999}]}`)}
	want := received(t, tools.Run(r.fsys, req))
	holders := func() int {
		n := 0
		for _, a := range r.args[len(r.args)-2:] {
			res := tools.Run(r.fsys, proto.Request{Tool: proto.GrepShard, Args: mustJSON(t, a)})
			if strings.Contains(res.Text, "a/heavy/") || strings.Contains(string(res.Shard), "a/heavy/") {
				n++
			}
		}
		return n
	}
	for call := range 2 {
		got, err := ex.Exec(context.Background(), req)
		if err != nil || got.Text != want.Text {
			t.Fatalf("call %d: %+v %v\nwant %s", call, got, err, want.Text)
		}
		for _, a := range r.args[len(r.args)-2:] {
			known := map[string]int64{}
			for _, w := range a.Weights {
				known[w.Path] = w.Bytes
			}
			if call == 0 && len(known) > 0 {
				t.Fatalf("the first call's shares were given %v", a.Weights)
			}
			if call == 1 && known["a/heavy"] < 40*80<<10 {
				t.Fatalf("the second call's shares were given %v", a.Weights)
			}
		}
		if got, want := holders(), call+1; got != want {
			t.Fatalf("call %d: a/heavy searched by %d shards, want %d", call, got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
