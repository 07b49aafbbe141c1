package tools

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/moatdev/moat/guest/match"
	"github.com/moatdev/moat/guest/proto"
)

func TestGrepOutputModes(t *testing.T) {
	fsys := fstest.MapFS{
		"a.txt":     file("a\nb hit\nc\nd\ne\nf\ng hit\nh\ni hit\nj\n"),
		"b/y.txt":   file("hit one\nz\n"),
		"b/bin.dat": file("hit\x00\n"),
		"b/big.bin": file("h\x00" + strings.Repeat("hit\n", grepBufSize/2)),
		"c.txt":     file("nothing\n"),
	}
	runCases(t, fsys, proto.Grep, []toolCase{
		{"content", map[string]any{"pattern": "hit"}, proto.Limits{},
			"a.txt:2: b hit\na.txt:7: g hit\na.txt:9: i hit\nb/y.txt:1: hit one"},
		{"files", map[string]any{"pattern": "hit", "output_mode": "files_with_matches"}, proto.Limits{}, "a.txt\nb/y.txt"},
		{"count", map[string]any{"pattern": "hit", "output_mode": "count"}, proto.Limits{}, "a.txt:3\nb/y.txt:1"},
		{"files capped", map[string]any{"pattern": "hit", "output_mode": "files_with_matches", "max_results": 1}, proto.Limits{},
			"a.txt\n[stopped after 1 files; more exist — narrow the pattern, path or glob]"},
		{"count capped", map[string]any{"pattern": "hit", "output_mode": "count", "max_results": 1}, proto.Limits{},
			"a.txt:3\n[stopped after 1 files; more exist — narrow the pattern, path or glob]"},
		{"context", map[string]any{"pattern": "hit", "context": 1}, proto.Limits{}, strings.Join([]string{
			"a.txt-1- a", "a.txt:2: b hit", "a.txt-3- c", "--",
			"a.txt-6- f", "a.txt:7: g hit", "a.txt-8- h", "a.txt:9: i hit", "a.txt-10- j", "--",
			"b/y.txt:1: hit one", "b/y.txt-2- z"}, "\n")},
		{"after", map[string]any{"pattern": "hit", "after_context": 1}, proto.Limits{}, strings.Join([]string{
			"a.txt:2: b hit", "a.txt-3- c", "--", "a.txt:7: g hit", "a.txt-8- h", "a.txt:9: i hit", "a.txt-10- j", "--",
			"b/y.txt:1: hit one", "b/y.txt-2- z"}, "\n")},
		{"before overrides context", map[string]any{"pattern": "hit", "context": 1, "before_context": 2, "path": "a.txt"}, proto.Limits{}, strings.Join([]string{
			"a.txt-1- a", "a.txt:2: b hit", "a.txt-3- c", "--", "a.txt-5- e", "a.txt-6- f", "a.txt:7: g hit", "a.txt-8- h",
			"a.txt:9: i hit", "a.txt-10- j"}, "\n")},
		// The cap cuts after the last hit's after-context, before the next hit.
		{"context capped", map[string]any{"pattern": "hit", "after_context": 5, "max_results": 2}, proto.Limits{}, strings.Join([]string{
			"a.txt:2: b hit", "a.txt-3- c", "a.txt-4- d", "a.txt-5- e", "a.txt-6- f", "a.txt:7: g hit", "a.txt-8- h",
			"[stopped after 2 matches; more exist — narrow the pattern, path or glob]"}, "\n")},
		{"context ignored in count mode", map[string]any{"pattern": "hit", "output_mode": "count", "context": 3}, proto.Limits{}, "a.txt:3\nb/y.txt:1"},
		{"binary named", map[string]any{"pattern": "hit", "path": "b/bin.dat"}, proto.Limits{},
			"b/bin.dat: binary file matches (a NUL byte at offset 3); grep shows no lines of binary files"},
		{"large binary named", map[string]any{"pattern": "hit", "path": "b/big.bin"}, proto.Limits{},
			"b/big.bin: binary file (a NUL byte at offset 1); grep does not search binary files"},
		{"no match", map[string]any{"pattern": "zzz", "output_mode": "count"}, proto.Limits{}, "no matches for zzz in ."},
		{"bad mode", map[string]any{"pattern": "x", "output_mode": "lines"}, proto.Limits{},
			"error: output_mode must be content, files_with_matches or count, got lines"},
	})
}

// TestGrepCaps: a max_results past the ceiling is held to it, and an answer
// never passes proto.MaxGrepBytes, with the same notice the model gets for
// the default cap.
func TestGrepCaps(t *testing.T) {
	line := strings.Repeat("x", 400) + " hit\n"
	fsys := fstest.MapFS{"big.txt": file(strings.Repeat(line, 5000)), "small.txt": file(strings.Repeat("hit\n", 3000))}
	got := call(t, fsys, proto.Grep, map[string]any{"pattern": "hit", "path": "small.txt", "max_results": 1 << 30}, proto.Limits{}).Text
	if want := sprintf("[stopped after %d matches; more exist — narrow the pattern, path or glob]", proto.MaxMaxResults); !strings.HasSuffix(got, want) {
		t.Errorf("max_results past the ceiling: ends %q", got[max(0, len(got)-200):])
	}
	got = call(t, fsys, proto.Grep, map[string]any{"pattern": "hit", "path": "big.txt", "max_results": 2000}, proto.Limits{}).Text
	if len(got) > proto.MaxGrepBytes+200 {
		t.Errorf("answer of %d bytes", len(got))
	}
	n := proto.MaxGrepBytes / len("big.txt:1000: "+line)
	if !strings.Contains(got, sprintf("big.txt:%d: ", n-1)) || strings.Contains(got, sprintf("big.txt:%d: ", n+2)) {
		t.Errorf("byte cap cut at the wrong place: %q", got[len(got)-300:])
	}
	if !strings.HasSuffix(got, "matches at the 131.1 KB output limit; more exist — narrow the pattern, path or glob]") {
		t.Errorf("byte cap notice: %q", got[len(got)-200:])
	}
}

// TestGrepScripts: Greek and Korean text is found by literals, by
// ignore_case (Greek has case) and by Unicode classes; \w is ASCII and the
// pattern's description says so.
func TestGrepScripts(t *testing.T) {
	fsys := fstest.MapFS{
		"el.txt": file("Καλημέρα κόσμε\nΟΔΥΣΣΕΥΣ και ΟΔΥΣΣΕΎΣ\nplain ascii\n"),
		"ko.txt": file("안녕하세요 세계\n한국어 검색\nascii only\n"),
	}
	runCases(t, fsys, proto.Grep, []toolCase{
		{"greek literal", map[string]any{"pattern": "κόσμε"}, proto.Limits{}, "el.txt:1: Καλημέρα κόσμε"},
		{"greek ignore case", map[string]any{"pattern": "καλημέρα", "ignore_case": true}, proto.Limits{}, "el.txt:1: Καλημέρα κόσμε"},
		{"greek sigma folds", map[string]any{"pattern": "οδυσσευς", "ignore_case": true}, proto.Limits{}, "el.txt:2: ΟΔΥΣΣΕΥΣ και ΟΔΥΣΣΕΎΣ"},
		{"korean literal", map[string]any{"pattern": "검색"}, proto.Limits{}, "ko.txt:2: 한국어 검색"},
		{"korean class", map[string]any{"pattern": `^\p{Hangul}+ \p{Hangul}+$`}, proto.Limits{}, "ko.txt:1: 안녕하세요 세계\nko.txt:2: 한국어 검색"},
		{"letters of any script", map[string]any{"pattern": `^\p{L}+ \p{L}+$`}, proto.Limits{},
			"el.txt:1: Καλημέρα κόσμε\nel.txt:3: plain ascii\nko.txt:1: 안녕하세요 세계\nko.txt:2: 한국어 검색\nko.txt:3: ascii only"},
		{"\\w is ascii", map[string]any{"pattern": `^\w+ \w+$`}, proto.Limits{}, "el.txt:3: plain ascii\nko.txt:3: ascii only"},
		{"greek script", map[string]any{"pattern": `\p{Greek}{5}`, "output_mode": "count"}, proto.Limits{}, "el.txt:2"},
	})
	f, _ := reflect.TypeOf(proto.GrepArgs{}).FieldByName("Pattern")
	if !strings.Contains(f.Tag.Get("jsonschema"), `\p{L}`) {
		t.Error("the pattern's description does not say how to match letters of any script")
	}
}

// TestGrepInvalidUTF8: "." and negated classes do not match an invalid
// byte (ripgrep's rule); a real U+FFFD is matched.
func TestGrepInvalidUTF8(t *testing.T) {
	fsys := fstest.MapFS{
		"latin1.txt": file("caf\xe9 au lait\nnaive\ncafe\n"),
		"fffd.txt":   file("caf\uFFFD ok\n"),
	}
	runCases(t, fsys, proto.Grep, []toolCase{
		{"dot", map[string]any{"pattern": "caf. "}, proto.Limits{}, "fffd.txt:1: caf\uFFFD ok"},
		{"negated class", map[string]any{"pattern": "caf[^e]"}, proto.Limits{}, "fffd.txt:1: caf\uFFFD ok"},
		{"literal around", map[string]any{"pattern": "au lait"}, proto.Limits{}, "latin1.txt:1: caf\xe9 au lait"},
		{"empty match", map[string]any{"pattern": "x*", "path": "latin1.txt", "output_mode": "count"}, proto.Limits{}, "latin1.txt:3"},
	})
}

// TestGrepContextBlocks compares grep's per-file output (text and cuts)
// with a line-by-line reference, through a tiny buffer so that context
// lines, hits and long lines fall on every side of the block edges.
func TestGrepContextBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"hit", "miss", "Hit", "x", "", "\r", "hi", "t", "caf\xe9", "κόσμε", "검색", "a b"}
	patterns := []string{"hit", "(?i)hit", "^hit", "t$", "h.t", "^$", "[^a-z ]", "x|검"}
	for iter := 0; iter < 400; iter++ {
		var b strings.Builder
		for n := rng.IntN(30); n > 0; n-- {
			for k := rng.IntN(4); k > 0; k-- {
				b.WriteString(words[rng.IntN(len(words))])
				if rng.IntN(5) == 0 {
					b.WriteString(strings.Repeat("long ", rng.IntN(40)))
				}
			}
			b.WriteByte('\n')
		}
		if rng.IntN(3) == 0 {
			b.WriteString("tail hit")
		}
		data := b.String()
		pat := patterns[rng.IntN(len(patterns))]
		before, after := rng.IntN(4), rng.IntN(4)
		fsys := fstest.MapFS{"f": file(data)}
		m, err := match.Compile(pat, false)
		if err != nil {
			t.Fatal(err)
		}
		strict, _ := newStrict(pat, false)
		g := &grepper{fsys: fsys, m: m, strict: strict, buf: make([]byte, 16+rng.IntN(64)), maxBuf: maxLineBuf, max: 1 << 20,
			mode: proto.GrepContent, before: before, after: after, piece: 1 + rng.IntN(40)}
		if err := g.search("f"); err != nil {
			t.Fatal(err)
		}
		var gotText string
		var gotCuts []int
		if len(g.parts) > 0 {
			gotText, gotCuts = g.parts[0].Text, g.parts[0].Cuts
		}
		wantText, wantCuts := refContext("f", data, regexp.MustCompile(pat), before, after)
		if gotText != wantText || fmt.Sprint(gotCuts) != fmt.Sprint(wantCuts) {
			t.Fatalf("%q in %q, -B%d -A%d:\ngot  %q %v\nwant %q %v", pat, data, before, after, gotText, gotCuts, wantText, wantCuts)
		}
	}
}

// refContext is the reference for one file's content output: each line
// matched on its own, ripgrep's context layout, a cut after each hit's
// after-context.
func refContext(path, data string, re *regexp.Regexp, before, after int) (string, []int) {
	lines := strings.SplitAfter(data, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var hits []int
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		if re.MatchString(l) && (utf8.ValidString(l) || refStrict(re, l)) {
			hits = append(hits, i+1)
		}
	}
	show := map[int]bool{}
	for _, h := range hits {
		for l := max(1, h-before); l <= min(len(lines), h+after); l++ {
			show[l] = true
		}
	}
	var out strings.Builder
	var cuts []int
	isHit := map[int]bool{}
	for _, h := range hits {
		isHit[h] = true
	}
	bound := func(k int) int {
		e := hits[k] + after
		if k+1 < len(hits) {
			e = min(e, hits[k+1]-1)
		}
		return min(e, len(lines))
	}
	last, k := 0, 0
	for l := 1; l <= len(lines); l++ {
		if show[l] {
			if last > 0 && l > last+1 && (before > 0 || after > 0) {
				out.WriteString("--\n")
			}
			sep := "-"
			if isHit[l] {
				sep = ":"
			}
			text := strings.TrimSuffix(strings.TrimSuffix(lines[l-1], "\n"), "\r")
			if len(text) > proto.MaxLineBytes {
				text = string(cutUTF8([]byte(text), proto.MaxLineBytes)) + "…"
			}
			out.WriteString(path + sep + strconv.Itoa(l) + sep + " " + text + "\n")
			last = l
		}
		for k < len(hits) && bound(k) <= l {
			cuts = append(cuts, out.Len())
			k++
		}
	}
	return out.String(), cuts
}

// refStrict decides a line with invalid UTF-8 as ripgrep does: the pattern
// must match without taking any invalid byte (or U+FFFD) for a character.
// The stand-in is the first of standIns the line does not hold.
func refStrict(re *regexp.Regexp, l string) bool {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return true
	}
	in := rune(-1)
	for _, r := range standIns {
		if !strings.ContainsRune(l, r) {
			in = r
			break
		}
	}
	if in < 0 || !strictFFFD(tree, in) {
		return true
	}
	s := regexp.MustCompile(tree.String())
	return s.MatchString(strings.ReplaceAll(l, "\uFFFD", string(in)))
}

// TestShardedGrepModes: MergeGrep answers byte for byte as one instance in
// every mode, with context and with each cap.
func TestShardedGrepModes(t *testing.T) {
	fsys := fstest.MapFS{}
	long := strings.Repeat("y", 300)
	for i := 0; i < 60; i++ {
		var b strings.Builder
		for l := 0; l < 40; l++ {
			if (l*7+i)%5 == 0 {
				fmt.Fprintf(&b, "hit %d %d %s\n", i, l, long)
			} else {
				fmt.Fprintf(&b, "line %d\n", l)
			}
		}
		fsys[fmt.Sprintf("d%d/s%d/f%02d.txt", i%6, i%4, i)] = file(b.String())
	}
	fsys["d1/s1/bin.txt"] = file("hit\n" + strings.Repeat("z\n", 100) + "\x00")
	fsys["d2/.gitignore"] = bigIgnore()    // a note every shard makes
	fsys["d4/s3/.gitignore"] = bigIgnore() // one shard's note, past some caps
	for _, args := range []string{
		`{"pattern":"hit"}`, `{"pattern":"hit","max_results":2000}`, `{"pattern":"hit","context":2}`,
		`{"pattern":"hit","before_context":1,"max_results":33}`, `{"pattern":"hit","after_context":3,"max_results":2000}`,
		`{"pattern":"hit","output_mode":"files_with_matches"}`, `{"pattern":"hit","output_mode":"files_with_matches","max_results":7}`,
		`{"pattern":"hit","output_mode":"count","max_results":2000}`, `{"pattern":"hit","output_mode":"count","max_results":9}`,
		`{"pattern":"nothing","output_mode":"count"}`,
	} {
		one := Run(fsys, proto.Request{Tool: proto.Grep, Args: json.RawMessage(args)})
		for n := 2; n <= 4; n++ {
			var shards []proto.GrepShardResult
			for s := 0; s < n; s++ {
				a := fmt.Sprintf(`{"shard":%d,"shards":%d,%s`, s, n, args[1:])
				r := Run(fsys, proto.Request{Tool: proto.GrepShard, Args: json.RawMessage(a)})
				var res proto.GrepShardResult
				if err := json.Unmarshal(proto.ShardJSON(r), &res); r.IsError || err != nil {
					t.Fatalf("shard %d of %d answered %q: %v", s, n, r.Text, err)
				}
				shards = append(shards, res)
			}
			if got := MergeGrep(json.RawMessage(args), proto.Limits{}, shards); got.Text != one.Text || got.IsError != one.IsError {
				t.Fatalf("%s with %d shards:\n%.3000s\nwant:\n%.3000s", args, n, got.Text, one.Text)
			}
		}
	}
}

// TestReadFileRefusesLateNUL: read_file never passes a NUL on, wherever it
// is in what it reads.
func TestReadFileRefusesLateNUL(t *testing.T) {
	head := strings.Repeat("text line\n", 2000) // 20 KB, past the sniffed head
	fsys := fstest.MapFS{"late.txt": file(head + "a\x00b\nmore\n"), "after.txt": file(head + strings.Repeat("x\n", 300000) + "\x00")}
	runCases(t, fsys, proto.ReadFile, []toolCase{
		{"in the page", map[string]any{"path": "late.txt"}, proto.Limits{},
			sprintf("error: binary file: late.txt (20.0 KB, a NUL byte at offset %d)", len(head)+1)},
		{"in the lines skipped", map[string]any{"path": "late.txt", "offset": 2002}, proto.Limits{},
			sprintf("error: binary file: late.txt (20.0 KB, a NUL byte at offset %d)", len(head)+1)},
		{"past the page", map[string]any{"path": "after.txt", "limit": 1}, proto.Limits{},
			"text line\n\n[showed lines 1-1; the file has more, call read_file with offset=2]"},
	})
}

// FuzzGrepContext: for any text, pattern, context and buffer size, one
// file's output and cuts are the reference's (refContext).
func FuzzGrepContext(f *testing.F) {
	f.Add("a\nb hit\nc\r\nd\n\ne hit", "hit", uint8(1), uint8(2), uint8(8), false)
	f.Add("caf\xe9\n\uFFFD\xff\nκόσμε\n", ".", uint8(0), uint8(1), uint8(3), false)
	f.Add("x\ny\nX\n", "^x$", uint8(3), uint8(0), uint8(1), true)
	// Cliff classes and edges of issue 22: many DFA states, a counted
	// repetition, a keyword list, a real U+10FFFE beside invalid bytes.
	f.Add("abcdefghijklmnopqx\nqqqqqqqqqqqqqqx\n", `[a-q][^u-z]{13}x`, uint8(1), uint8(1), uint8(5), false)
	f.Add("wwwwwwx\nab\n", `\w{1,1000}x`, uint8(0), uint8(1), uint8(4), false)
	f.Add("alpha beta\ngamma\nDELTA\n", `alpha|beta|gamma|delta|epsilon|zeta|eta|theta|iota|kappa`, uint8(1), uint8(0), uint8(6), true)
	f.Add("bad \xff \U0010FFFE\n\uFFFD\n", `\x{10FFFE}|\x{FFFD}`, uint8(0), uint8(0), uint8(7), false)
	// The hex and counted classes of issue 34, and a regex over a line of
	// minified JSON.
	js := `[{"id":1,"sha":"3f786850e387550fdab836ed7e6dc881de23001b"},{"id":2,"last":true}]` + "\nx\n2024-01-31 MAX_LINE_BYTES 0xDEADBEEF1\n"
	f.Add(js, `"id":[0-9]+,"last":true`, uint8(1), uint8(1), uint8(8), false)
	f.Add(js, `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b|[A-Z_]{12,}|0x[0-9a-fA-F]{8,}|[0-9a-f]{40}`, uint8(0), uint8(1), uint8(5), true)
	f.Fuzz(func(t *testing.T, data, pattern string, before, after, bufSize uint8, ignoreCase bool) {
		for _, l := range strings.Split(data, "\n") {
			if len(l) > proto.MaxLineBytes-hitContext {
				t.Skip("the reference does not shorten long lines around the match")
			}
		}
		if strings.IndexByte(data, 0) >= 0 {
			t.Skip("binary")
		}
		ref := pattern
		if ignoreCase {
			ref = "(?i)" + pattern
		}
		re, err := regexp.Compile(ref)
		if err != nil {
			return
		}
		m, err := match.Compile(pattern, ignoreCase)
		if err != nil && strings.Contains(err.Error(), "surrogate") {
			return // refused on purpose
		}
		if err != nil {
			t.Fatalf("%q compiles with regexp but not for grep: %v", pattern, err)
		}
		strict, err := newStrict(pattern, ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		b, a := int(before%8), int(after%8)
		fsys := fstest.MapFS{"f": file(data)}
		g := &grepper{fsys: fsys, m: m, strict: strict, buf: make([]byte, 1+int(bufSize)), maxBuf: maxLineBuf, max: 1 << 20,
			mode: proto.GrepContent, before: b, after: a, piece: 1 + int(bufSize)/3}
		if err := g.search("f"); err != nil {
			t.Fatal(err)
		}
		var gotText string
		var gotCuts []int
		if len(g.parts) > 0 {
			gotText, gotCuts = g.parts[0].Text, g.parts[0].Cuts
		}
		wantText, wantCuts := refContext("f", data, re, b, a)
		if gotText != wantText || fmt.Sprint(gotCuts) != fmt.Sprint(wantCuts) {
			t.Fatalf("%q in %q, -B%d -A%d:\ngot  %q %v\nwant %q %v", pattern, data, b, a, gotText, gotCuts, wantText, wantCuts)
		}
	})
}

// TestGrepLinePastMaxBuffer: a line longer than the largest buffer is
// searched in pieces, and still shows and counts once.
func TestGrepLinePastMaxBuffer(t *testing.T) {
	data := "short hit\n" + strings.Repeat("hit ", 40) + "\nlast\n" + strings.Repeat("y", 50) + "hit" + strings.Repeat("z", 50)
	fsys := fstest.MapFS{"f": file(data)}
	for _, mode := range []string{proto.GrepContent, proto.GrepCount} {
		m, _ := match.Compile("hit", false)
		g := &grepper{fsys: fsys, m: m, buf: make([]byte, 8), maxBuf: 32, max: 100, mode: mode}
		if err := g.search("f"); err != nil {
			t.Fatal(err)
		}
		got := string(g.out)
		// Pieces of maxBuf+1 bytes (a line of exactly maxBuf fits whole).
		want := "f:1: short hit\nf:2: hit hit hit hit hit hit hit hit h\nf:4: …" + strings.Repeat("y", 17) + "hit" + strings.Repeat("z", 13) + "\n"
		if mode == proto.GrepCount {
			want = "f:3\n"
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", mode, got, want)
		}
	} // With context the pieces still give each line one number.
	m, _ := match.Compile("hit", false)
	g := &grepper{fsys: fsys, m: m, buf: make([]byte, 8), maxBuf: 32, max: 100, mode: proto.GrepContent, before: 2, after: 2}
	if err := g.search("f"); err != nil {
		t.Fatal(err)
	}
	want := "f:1: short hit\nf:2: hit hit hit hit hit hit hit hit h\nf-3- last\nf:4: …" + strings.Repeat("y", 17) + "hit" + strings.Repeat("z", 13) + "\n"
	if got := string(g.out); got != want {
		t.Errorf("context: got %q, want %q", got, want)
	}
}
