package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/moatdev/moat/guest/match"
	"github.com/moatdev/moat/guest/proto"
)

// bigIgnore is a .gitignore past maxIgnoreFileBytes (in fewer rules than
// maxIgnoreFileRules) whose rules ignore "*.skip" (in the part that is
// applied) and nothing grep searches for.
func bigIgnore() *fstest.MapFile {
	const rule = "/a-long-folder-name-for-padding-the-ignore-file-out/*.tmp\n"
	return file("*.skip\n" + strings.Repeat(rule, maxIgnoreFileBytes/len(rule)+10))
}

// notesTree is a tree whose walk makes notes at every depth a sharded grep
// deals with: above the shards' units (every shard walks there), at them
// and below them, more notes than an answer shows, and some past the point
// where a capped grep stops.
func notesTree() errFS {
	m := fstest.MapFS{}
	for i := 0; i < 48; i++ {
		var b strings.Builder
		for l := 0; l < 12; l++ {
			if (l*5+i)%4 == 0 {
				fmt.Fprintf(&b, "hit %d %d\n", i, l)
			} else {
				fmt.Fprintf(&b, "line %d\n", l)
			}
		}
		m[fmt.Sprintf("d%d/s%d/f%02d.txt", i%6, i%4, i)] = file(b.String())
		m[fmt.Sprintf("d%d/s%d/f%02d.skip", i%6, i%4, i)] = file("hit ignored\n")
	}
	m["top.txt"] = file("hit at the top\n")
	m[".gitignore"] = bigIgnore()         // every shard reads it
	m["d1/.gitignore"] = bigIgnore()      // above the units: every shard
	m["d2/s1/.gitignore"] = bigIgnore()   // a unit
	m["d3/s2/x/.gitignore"] = bigIgnore() // below a unit
	m["d3/s2/x/y.txt"] = file("hit below\n")
	m["d4/s0/deep/z.txt"] = file("hit unread\n")
	m["d5/s3/.gitignore"] = bigIgnore() // late in the walk: past a capped grep's stop
	return errFS{MapFS: m, errs: map[string]error{
		"d4/s0/deep": syscall.ENAMETOOLONG, // below a unit
		"d2/s2":      syscall.ENAMETOOLONG, // a unit
		"d0/s0":      syscall.EACCES,       // the deny-list: no note
	}}
}

// shardedGrep runs args as n shards and merges them as the host does.
func shardedGrep(t *testing.T, fsys fs.FS, args string, lim proto.Limits, n int) proto.Response {
	t.Helper()
	var shards []proto.GrepShardResult
	for s := 0; s < n; s++ {
		a := fmt.Sprintf(`{"shard":%d,"shards":%d,%s`, s, n, args[1:])
		r := Run(fsys, proto.Request{Tool: proto.GrepShard, Args: json.RawMessage(a), Limits: lim})
		if r.IsError {
			return r
		}
		var res proto.GrepShardResult
		if err := json.Unmarshal(proto.ShardJSON(r), &res); err != nil {
			t.Fatalf("shard %d of %d answered %q: %v", s, n, r.Text, err)
		}
		shards = append(shards, res)
	}
	return MergeGrep(json.RawMessage(args), lim, shards)
}

// TestGrepNotes: grep walks as glob does, and says after its hits, in
// every mode, what it could not search; a sharded grep says exactly the
// same, notes merged once each, in walk order, and none from beyond where
// one instance stopped.
func TestGrepNotes(t *testing.T) {
	fsys := notesTree()
	one := call(t, fsys, proto.Grep, `{"pattern":"hit"}`, proto.Limits{MaxResults: 1000})
	want := "[.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]\n" +
		"[d1/.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]\n" +
		"[d2/s1/.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]\n" +
		"[not searched: the contents of d2/s2 (its path is longer than the file system allows)]\n" +
		"[d3/s2/x/.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]\n" +
		"[and 2 more notes like these]"
	if !strings.HasSuffix(one.Text, "\ntop.txt:1: hit at the top\n"+want) {
		t.Errorf("got:\n%s", one.Text)
	}
	if strings.Contains(one.Text, "ignored") || strings.Contains(one.Text, "unread") || strings.Contains(one.Text, "d0/s0") {
		t.Errorf("an ignored or unread file was searched, or a denied folder noted:\n%s", one.Text)
	}
	capped := call(t, fsys, proto.Grep, `{"pattern":"hit","max_results":3}`, proto.Limits{})
	if !strings.HasSuffix(capped.Text, "[stopped after 3 matches; more exist — narrow the pattern, path or glob]\n"+
		"[.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]") {
		t.Errorf("capped early:\n%s", capped.Text)
	}
	none := call(t, fsys, proto.Grep, `{"pattern":"nothing","path":"d1"}`, proto.Limits{})
	if none.Text != "no matches for nothing in d1\n"+
		"[.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]\n"+
		"[d1/.gitignore is larger than 256 KiB: only its first 256 KiB of rules were applied]" {
		t.Errorf("no match under a folder (its ancestors' notes too):\n%s", none.Text)
	}

	var args []string
	for _, mode := range []string{"", `,"output_mode":"files_with_matches"`, `,"output_mode":"count"`, `,"context":1`} {
		for _, max := range []string{"", `,"max_results":1`, `,"max_results":11`, `,"max_results":40`} {
			args = append(args, `{"pattern":"hit"`+mode+max+`}`)
		}
	}
	args = append(args, `{"pattern":"nothing"}`, `{"pattern":"hit","path":"d3"}`, `{"pattern":"hit","path":"d2/s1"}`,
		`{"pattern":"hit","glob":"*.skip"}`, `{"pattern":"hit","path":"d3/s2/x/y.txt"}`)
	for _, a := range args {
		one := call(t, fsys, proto.Grep, a, proto.Limits{})
		for _, n := range []int{2, 3, 5} {
			if got := shardedGrep(t, fsys, a, proto.Limits{}, n); got.Text != one.Text || got.IsError != one.IsError {
				t.Fatalf("%s with %d shards:\n%s\nwant:\n%s", a, n, got.Text, one.Text)
			}
		}
	}
}

// slowReadFS reads files slowly, a block at a time, standing in for a
// file too large to search in the time allowed.
type slowReadFS struct {
	fstest.MapFS
	delay time.Duration
	reads *int
}

func (s slowReadFS) Open(name string) (fs.File, error) {
	f, err := s.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	return slowFile{File: f, s: s}, nil
}

func (s slowReadFS) ReadDir(name string) ([]fs.DirEntry, error) { return s.MapFS.ReadDir(name) }

type slowFile struct {
	fs.File
	s slowReadFS
}

func (f slowFile) Read(b []byte) (int, error) {
	*f.s.reads++
	time.Sleep(f.s.delay)
	return f.File.Read(b[:min(len(b), 64<<10)])
}

// A grep that reaches its deadline answers with what it found so far and
// a note, in a walk (slow folders) and inside a large file (slow reads),
// instead of running until the host gives up on it.
func TestGrepStopsAtDeadline(t *testing.T) {
	m := fstest.MapFS{}
	const dirs = 400
	for i := range dirs {
		m[fmt.Sprintf("d%03d/f.txt", i)] = file("hit\n")
	}
	reads := 0
	lim := proto.Limits{MaxResults: 1000, TimeLimit: int64(50 * time.Millisecond)}
	resp := call(t, slowFS{MapFS: m, delay: 2 * time.Millisecond, reads: &reads}, proto.Grep, `{"pattern":"hit"}`, lim)
	if resp.IsError || !strings.HasPrefix(resp.Text, "d000/f.txt:1: hit\n") ||
		!strings.HasSuffix(resp.Text, "\n["+noteWalkTimeUp+"]") {
		t.Errorf("slow walk:\n%s", resp.Text)
	}
	if reads > dirs/2 {
		t.Errorf("the walk read %d of %d folders after its deadline", reads, dirs+1)
	}
	for n := 2; n <= 3; n++ {
		reads = 0
		got := shardedGrep(t, slowFS{MapFS: m, delay: 2 * time.Millisecond, reads: &reads}, `{"pattern":"hit"}`, lim, n)
		if got.IsError || !strings.HasSuffix(got.Text, "\n["+noteWalkTimeUp+"]") {
			t.Errorf("slow walk, %d shards:\n%s", n, got.Text)
		}
	}

	big := strings.Repeat("hit\n"+strings.Repeat("filler line\n", 1000), 2000) // 24 MB
	m = fstest.MapFS{"a.txt": file("hit first\n"), "big.txt": file(big), "z.txt": file("hit last\n")}
	fsys := slowReadFS{MapFS: m, delay: 2 * time.Millisecond, reads: &reads}
	total := len(big) / (64 << 10)
	for _, c := range []struct{ args, want string }{
		{`{"pattern":"hit"}`, "a.txt:1: hit first\n[" + noteWalkTimeUp + "]"},
		// Hits were found, but the file could not be read to its end
		// for NUL bytes in time: not shown, and not "no matches" either.
		{`{"pattern":"hit","path":"big.txt"}`, "[" + noteFileTimeUpWithheld + "]"},
	} {
		reads = 0
		resp = call(t, fsys, proto.Grep, c.args, lim)
		if resp.Text != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.args, resp.Text, c.want)
		}
		if reads > total/4 {
			t.Errorf("%s: %d of %d reads of the large file", c.args, reads, total)
		}
	}

	// Without a time limit the search is complete.
	fsys.delay = 0
	resp = call(t, fsys, proto.Grep, `{"pattern":"hit","output_mode":"count"}`, proto.Limits{})
	if resp.Text != "a.txt:1\nbig.txt:2000\nz.txt:1" {
		t.Errorf("without a time limit:\n%s", resp.Text)
	}
}

// A count stopped by the deadline in the middle of a file keeps what it
// counted: here the deadline has passed before the file is opened, so
// exactly the first piece (the first block is always searched) is counted.
func TestGrepCountAtDeadlineKeepsFile(t *testing.T) {
	fsys := fstest.MapFS{"f.txt": file(strings.Repeat("hit\n", 1000))}
	m, err := match.Compile("hit", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ mode, want string }{
		{proto.GrepCount, "f.txt:10\n"},
		{proto.GrepContent, "f.txt:1: hit\nf.txt:2: hit\nf.txt:3: hit\nf.txt:4: hit\nf.txt:5: hit\nf.txt:6: hit\nf.txt:7: hit\nf.txt:8: hit\nf.txt:9: hit\nf.txt:10: hit\n"}, // known to be text: its hits are kept too
	} {
		g := &grepper{fsys: fsys, m: m, buf: make([]byte, grepBufSize), maxBuf: maxLineBuf, max: 100,
			mode: c.mode, piece: 40, dl: &deadline{expires: true}, notes: &walkNotes{}}
		if err := g.search("f.txt"); err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(g.parts) == 1 {
			got = g.parts[0].Text
		}
		if !g.late || got != c.want || len(g.parts) > 1 {
			t.Errorf("%s: late %v, parts %+v; want %q", c.mode, g.late, g.parts, c.want)
		}
	}
}

// A note that arises again past the ones shown is counted once.
func TestWalkNotesCountDifferentNotes(t *testing.T) {
	var n walkNotes
	for _, s := range []string{"a", "b", "a", "c", "d", "e", "f", "g", "f", "g", "f", "late"} {
		n.add(s)
	}
	n.timeUp("time")
	var b strings.Builder
	n.write(&b)
	if want := "[a]\n[b]\n[c]\n[d]\n[e]\n[and 3 more notes like these]\n[time]\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// A file read whole before its search passes the deadline shows the hits
// found so far with the note, never "no matches" (issue 22).
func TestGrepDeadlineKeepsHits(t *testing.T) {
	big := strings.Repeat("hit\n"+strings.Repeat("filler line\n", 100), 160) // 190 KB: one buffer
	reads := 0
	fsys := slowReadFS{MapFS: fstest.MapFS{"big.txt": file(big)}, delay: 20 * time.Millisecond, reads: &reads}
	lim := proto.Limits{MaxResults: 1000, TimeLimit: int64(50 * time.Millisecond)}
	for _, c := range []struct{ args, prefix string }{
		{`{"pattern":"hit","path":"big.txt"}`, "big.txt:1: hit\nbig.txt:102: hit\n"},
		{`{"pattern":"hit","path":"big.txt","output_mode":"count"}`, "big.txt:"},
	} {
		resp := call(t, fsys, proto.Grep, c.args, lim)
		if resp.IsError || !strings.HasPrefix(resp.Text, c.prefix) || !strings.HasSuffix(resp.Text, "\n["+noteFileTimeUp+"]") {
			t.Errorf("%s:\n%s", c.args, resp.Text)
		}
	}
}
