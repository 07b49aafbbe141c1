package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
)

// TestBalanceSplitsAHeavyFolder: the shards of a grep report the weight of
// the folders they walked (each share of a split folder adding up to the
// whole), Balance keeps them, and the next grep deals the heavy folder's
// files out to every shard instead of whole to one, with the same answer.
func TestBalanceSplitsAHeavyFolder(t *testing.T) {
	root := t.TempDir()
	line := strings.Repeat("x", 1023) + "\n"
	const heavyFiles, fileSize = 48, 64 << 10
	for i := range heavyFiles {
		dir := filepath.Join(root, "big", "heavy")
		if i%2 == 1 {
			dir = filepath.Join(dir, fmt.Sprintf("sub%d", i%3)) // its folders, dealt in turn once it is split
		}
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("h%02d.txt", i)), []byte("hit heavy\n"+strings.Repeat(line, fileSize/1024-1)+strings.Repeat("y", 1024-10)), 0o644)
	}
	for i := range 12 {
		dir := filepath.Join(root, "big", fmt.Sprintf("light%d", i))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "l.txt"), []byte("hit light\n"), 0o644)
	}
	fsys := os.DirFS(root)
	const args = `{"pattern":"hit"}`
	one := Run(fsys, proto.Request{Tool: proto.Grep, Args: json.RawMessage(args)})

	var b Balance
	if got := b.Known(proto.GrepShard, []byte(args)); got != nil {
		t.Fatalf("known %v before anything was learned", got)
	}
	heavyHolders := func(shards []proto.GrepShardResult) int {
		n := 0
		for _, r := range shards {
			if slices.ContainsFunc(r.Parts, func(p proto.GrepPart) bool { return strings.HasPrefix(p.Path, "big/heavy/") }) {
				n++
			}
		}
		return n
	}
	got, shards := runShards(t, fsys, proto.GrepShard, args, proto.Limits{}, 2, MergeGrep)
	if got.Text != one.Text {
		t.Fatalf("got:\n%s\nwant:\n%s", got.Text, one.Text)
	}
	if n := heavyHolders(shards); n != 1 {
		t.Fatalf("before: big/heavy searched by %d shards, want 1 (a unit)", n)
	}
	shares := make([]Share, len(shards))
	weight := map[string]int64{}
	for i := range shards {
		shares[i] = Share{v: &shards[i]}
		for _, w := range shards[i].Weights {
			weight[w.Path] += w.Bytes
		}
	}
	want := int64(heavyFiles * (fileSize + fileWeight))
	// A share of a folder lighter than minWeight is not reported: the
	// light files' shard reports none.
	if weight["big/heavy"] != want || weight["big"] < want || weight["big"] > want+12*(10+fileWeight) || weight["."] != weight["big"] {
		t.Fatalf("weights %v, want big/heavy %d", weight, want)
	}
	if _, ok := weight["big/light0"]; ok {
		t.Fatalf("a light folder reported: %v", weight)
	}
	b.Learn(shares)
	known := b.Known(proto.GrepShard, []byte(args))
	// big/heavy's own entries: 24 files and 3 folders.
	if len(known) != 6 || known[0].Path != "." || known[2] != (proto.FolderWeight{Path: "big/heavy", Bytes: want, Entries: 27}) {
		t.Fatalf("known %v", known)
	}
	if got := b.Known(proto.GrepShard, []byte(`{"pattern":"hit","path":"big/light0"}`)); got != nil {
		t.Fatalf("known %v under a folder of none", got)
	}

	kj, _ := json.Marshal(known)
	sargs := `{"weights":` + string(kj) + `,` + args[1:]
	got, shards = runShards(t, fsys, proto.GrepShard, sargs, proto.Limits{}, 2, MergeGrep)
	if got.Text != one.Text {
		t.Fatalf("split, got:\n%s\nwant:\n%s", got.Text, one.Text)
	}
	if n := heavyHolders(shards); n != 2 {
		t.Fatalf("split: big/heavy searched by %d shards, want both", n)
	}
	weight = map[string]int64{}
	for _, r := range shards {
		for _, w := range r.Weights {
			weight[w.Path] += w.Bytes
		}
	}
	if weight["big/heavy"] != want {
		t.Fatalf("split: the shares of big/heavy add up to %d, want %d", weight["big/heavy"], want)
	}
}

// TestBalanceKnown: the folders given are those at or below the grep's
// path, the heaviest maxKnown, in walk order; what a grep stopped early
// reported lowers no weight; a glob's shares are given none.
func TestBalanceKnown(t *testing.T) {
	var b Balance
	share := func(ws ...proto.FolderWeight) Share { return Share{v: &proto.GrepShardResult{Weights: ws}} }
	fw := func(p string, n int64) proto.FolderWeight { return proto.FolderWeight{Path: p, Bytes: n} }
	b.Learn([]Share{
		share(fw(".", 300), fw("a", 200), fw("a/b", 150), fw("a/b-c", 5), fw("ab", 1)),
		share(fw("a/b", 10), fw("a/b/c", 4)),
	})
	want := []proto.FolderWeight{fw(".", 300), fw("a", 200), fw("a/b", 160), fw("a/b/c", 4), fw("a/b-c", 5), fw("ab", 1)}
	if got := b.Known(proto.GrepShard, []byte(`{"pattern":"x"}`)); !slices.Equal(got, want) {
		t.Fatalf("known %v", got)
	}
	if got := b.Known(proto.GrepShard, []byte(`{"pattern":"x","path":"a/"}`)); !slices.Equal(got, want[1:5]) {
		t.Fatalf("known under a: %v", got)
	}
	if got := b.Known(proto.GlobShard, []byte(`{"pattern":"x"}`)); got != nil {
		t.Fatalf("a glob given %v", got)
	}
	if got := b.Known(proto.GrepShard, []byte(`{"pattern":`)); got != nil {
		t.Fatalf("bad args given %v", got)
	}
	// A later, smaller report does not lower a weight.
	b.Learn([]Share{share(fw("a/b", 1))})
	if got := b.Known(proto.GrepShard, []byte(`{"pattern":"x"}`)); !slices.Equal(got, want) {
		t.Fatalf("after a smaller report: %v", got)
	}
	// A share reporting more folders than a guest does, or weights past
	// any tree's, is not kept as it came.
	var many []proto.FolderWeight
	for i := range maxWeights + 1 {
		many = append(many, fw(fmt.Sprintf("x/%d", i), 1))
	}
	b.Learn([]Share{share(many...)})
	b.Learn([]Share{share(fw("a", 1<<62)), share(fw("a", 1<<62))})
	if got := b.Known(proto.GrepShard, []byte(`{"pattern":"x","path":"x"}`)); got != nil {
		t.Fatalf("kept %d folders of a share past maxWeights", len(got))
	}
	if got := b.Known(proto.GrepShard, []byte(`{"pattern":"x","path":"a"}`)); got[0] != fw("a", 2*maxFolderWeight) {
		t.Fatalf("weights past the bound: %v", got[0])
	}
	// At most maxKnown, the heaviest.
	var ws []proto.FolderWeight
	for i := range maxKnown + 10 {
		ws = append(ws, fw(fmt.Sprintf("m/%03d", i), int64(minSplit+i)))
	}
	var c Balance
	c.Learn([]Share{share(ws[:100]...), share(ws[100:]...)})
	got := c.Known(proto.GrepShard, []byte(`{"pattern":"x"}`))
	if len(got) != maxKnown || got[0].Path != "m/010" || got[len(got)-1].Path != fmt.Sprintf("m/%03d", maxKnown+9) {
		t.Fatalf("%d known, %v ... %v", len(got), got[0], got[len(got)-1])
	}
}

// TestDealerByWeight: each unit goes to exactly one shard, the one whose
// units so far weigh least; at every point of the walk the shares differ
// by at most the heaviest unit; knowing nothing, units alternate.
func TestDealerByWeight(t *testing.T) {
	units := []string{"a/1", "a/2", "a/3", "a/4", "b/1", "b/2", "b/3", "c/1", "c/2", "c/3", "c/4", "c/5"}
	weights := map[string]int64{"a/2": 9 << 20, "b/1": 3 << 20, "c/4": 5 << 20}
	var known []proto.FolderWeight
	for p, n := range weights {
		known = append(known, proto.FolderWeight{Path: p, Bytes: n})
	}
	for _, n := range []int{2, 3} {
		ds := make([]dealer, n)
		for s := range n {
			ds[s] = newDealer(s, n, ".", known)
		}
		loads := make([]int64, n)
		for _, u := range units {
			owner := -1
			for s := range n {
				if ds[s].mineDir(u) {
					if owner >= 0 {
						t.Fatalf("%s dealt to shards %d and %d", u, owner, s)
					}
					owner = s
				}
			}
			if owner < 0 {
				t.Fatalf("%s dealt to none of %d", u, n)
			}
			w, ok := weights[u]
			if !ok {
				w = unitWeight
			}
			loads[owner] += w
			if spread := slices.Max(loads) - slices.Min(loads); spread > 9<<20 {
				t.Fatalf("after %s the shares %v", u, loads)
			}
		}
	}
	// A heavy folder is split unless its own entries are many for its
	// weight (each shard lists it whole).
	d := newDealer(0, 2, ".", []proto.FolderWeight{{Path: "a/b", Bytes: 3 << 20, Entries: 9}, {Path: "a/c", Bytes: 3 << 20, Entries: 1000}, {Path: "a/d", Bytes: 1 << 20}})
	if !d.splitDir(".", "a/b") || d.splitDir(".", "a/c") || d.splitDir(".", "a/d") || !d.unit(".", "a/c") {
		t.Fatal("split: a/b (heavy, few entries) and not a/c (many) nor a/d (light)")
	}
	d0, d1 := newDealer(0, 2, ".", nil), newDealer(1, 2, ".", nil)
	for i, u := range units {
		if d0.mineDir(u) != (i%2 == 0) || d1.mineDir(u) != (i%2 == 1) {
			t.Fatalf("knowing nothing, unit %d is not dealt in turn", i)
		}
	}
}

// TestWeigherStopped: a walk stopped early reports the folders it
// finished and, with what it searched of them so far, those it was in.
func TestWeigherStopped(t *testing.T) {
	w := &weigher{open: []proto.FolderWeight{{Path: "."}}}
	w.add("a/b", minWeight)
	w.add("a/c", minWeight)
	w.add("d/e", minWeight) // stopped here: d/e, d and . are open
	got := w.weights()
	want := []proto.FolderWeight{
		{Path: "a/b", Bytes: minWeight, Entries: 1}, {Path: "a/c", Bytes: minWeight, Entries: 1},
		{Path: "a", Bytes: 2 * minWeight, Entries: 2}, {Path: "d/e", Bytes: minWeight, Entries: 1},
		{Path: "d", Bytes: minWeight, Entries: 1}, {Path: ".", Bytes: 3 * minWeight, Entries: 2},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("stopped: %+v\nwant %+v", got, want)
	}
	w = &weigher{open: []proto.FolderWeight{{Path: "."}}}
	w.add("a\xff", minWeight)
	w.add("b", minWeight)
	if got := w.weights(); len(got) != 2 || got[0].Path != "b" || got[1] != (proto.FolderWeight{Path: ".", Bytes: 2 * minWeight, Entries: 2}) {
		t.Fatalf("ended: %+v", got)
	}
}

// TestBalanceRemember: what one Balance kept (Weights, in walk order), a
// fresh one remembers whole, and gives as the first did; a list from a
// file is checked as a share's answer is: a path that is not a clean one
// of the tree is left out, numbers are bounded, a list too long is none
// of it, and a smaller weight lowers none.
func TestBalanceRemember(t *testing.T) {
	var a Balance
	share := func(ws ...proto.FolderWeight) Share { return Share{v: &proto.GrepShardResult{Weights: ws}} }
	fw := func(p string, n int64) proto.FolderWeight { return proto.FolderWeight{Path: p, Bytes: n, Entries: 3} }
	a.Learn([]Share{share(fw(".", 300), fw("a", 200), fw("a/b", 150)), share(fw("a/b-c", 5))})
	kept := a.Weights()
	if want := []proto.FolderWeight{fw(".", 300), fw("a", 200), fw("a/b", 150), fw("a/b-c", 5)}; !slices.Equal(kept, want) {
		t.Fatalf("weights %v, want %v", kept, want)
	}
	var b Balance
	b.Remember(kept)
	args := []byte(`{"pattern":"x"}`)
	if got, want := b.Known(proto.GrepShard, args), a.Known(proto.GrepShard, args); !slices.Equal(got, want) {
		t.Fatalf("remembered %v, the first gives %v", got, want)
	}
	b.Remember([]proto.FolderWeight{fw("../up", 1), fw("/abs", 1), fw("a/./b", 1), fw("a//b", 1), fw("c", -5), fw("d", 1<<62), fw("a", 1)})
	want := []proto.FolderWeight{fw(".", 300), fw("a", 200), fw("a/b", 150), fw("a/b-c", 5), fw("c", 0), fw("d", maxFolderWeight)}
	if got := b.Weights(); !slices.Equal(got, want) {
		t.Fatalf("after a list with bad entries: %v, want %v", got, want)
	}
	many := make([]proto.FolderWeight, maxLearned+1)
	for i := range many {
		many[i] = fw(fmt.Sprintf("x/%d", i), 1)
	}
	b.Remember(many)
	if got := b.Weights(); !slices.Equal(got, want) {
		t.Fatalf("a list past maxLearned was kept: %d folders", len(got))
	}
}
