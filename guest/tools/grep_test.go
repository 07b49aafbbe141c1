package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/moatdev/moat/guest/match"
	"github.com/moatdev/moat/guest/proto"
)

func grepFS() errFS {
	fsys := treeFS()
	m := fsys.MapFS
	m[".gitignore"] = file("*.log\n/build/\n")
	m["debug.log"] = file("needle in a log\n")
	m["build/gen.go"] = file("needle built\n")
	m["src/.gitignore"] = file("gen_*.go\n!gen_keep.go\n")
	m["src/gen_x.go"] = file("needle generated\n")
	m["src/gen_keep.go"] = file("needle kept\n")
	m["src/needle.txt"] = file("first\nA Needle here\nand a needle there\nneedle needle twice on one line\n")
	m["other/src/gen_y.go"] = file("needle not under src/.gitignore\n")
	m["other/build/x.txt"] = file("needle: /build/ is anchored to the root\n")
	m["linked.txt"] = link("src/needle.txt")
	m["linkdir"] = link("src")
	m["bin.dat"] = file("needle\x00binary\n")
	// Larger than grep's buffer, NUL in its head, the hit in a later block.
	m["bigbin.dat"] = file("\x00" + strings.Repeat("filler line\n", 30000) + "needle\n")
	// A NUL past the head makes a file binary too (ripgrep's rule).
	m["latenul.txt"] = file("needle early\n" + strings.Repeat("x", sniffLen) + "\x00\n")
	m["long.txt"] = file("needle" + strings.Repeat("é", 400) + "\n")
	m["crlf.txt"] = file("a needle\r\nb\r\n")
	m[".git/HEAD"] = file("needle in git\n")
	return fsys
}

func TestGrep(t *testing.T) {
	fsys := grepFS()
	longText := "needle" + strings.Repeat("é", (proto.MaxLineBytes-6)/2) + "…"
	runCases(t, fsys, proto.Grep, []toolCase{
		{"all", map[string]any{"pattern": "needle"}, proto.Limits{}, strings.Join([]string{
			"crlf.txt:1: a needle",
			"long.txt:1: " + longText,
			"other/build/x.txt:1: needle: /build/ is anchored to the root",
			"other/src/gen_y.go:1: needle not under src/.gitignore",
			"src/gen_keep.go:1: needle kept",
			"src/needle.txt:3: and a needle there",
			"src/needle.txt:4: needle needle twice on one line",
		}, "\n")},
		{"ignore case", map[string]any{"pattern": "NEEDLE", "path": "src/needle.txt", "ignore_case": true}, proto.Limits{},
			"src/needle.txt:2: A Needle here\nsrc/needle.txt:3: and a needle there\nsrc/needle.txt:4: needle needle twice on one line"},
		{"inline flag", map[string]any{"pattern": "(?i)a needle", "path": "src"}, proto.Limits{},
			"src/needle.txt:2: A Needle here\nsrc/needle.txt:3: and a needle there"},
		{"anchors are per line", map[string]any{"pattern": "^needle", "path": "src"}, proto.Limits{},
			"src/gen_keep.go:1: needle kept\nsrc/needle.txt:4: needle needle twice on one line"},
		{"end anchor", map[string]any{"pattern": `there$`}, proto.Limits{}, "src/needle.txt:3: and a needle there"},
		{"text anchors are line anchors", map[string]any{"pattern": `\Afirst\z`}, proto.Limits{}, "src/needle.txt:1: first"},
		{"no match across lines", map[string]any{"pattern": `here\s+and`}, proto.Limits{}, "no matches for here\\s+and in ."},
		{"negated class stays on the line", map[string]any{"pattern": `first[^x]+Needle`}, proto.Limits{}, "no matches for first[^x]+Needle in ."},
		{"single file ignored or not", map[string]any{"pattern": "needle", "path": "debug.log"}, proto.Limits{}, "debug.log:1: needle in a log"},
		{"single file via symlink", map[string]any{"pattern": "first", "path": "linked.txt"}, proto.Limits{}, "linked.txt:1: first"},
		{"no ignore", map[string]any{"pattern": "needle", "glob": "*.{log,go}"}, proto.Limits{NoIgnore: true},
			"build/gen.go:1: needle built\ndebug.log:1: needle in a log\nother/src/gen_y.go:1: needle not under src/.gitignore\nsrc/gen_keep.go:1: needle kept\nsrc/gen_x.go:1: needle generated"},
		{"glob base name", map[string]any{"pattern": "needle", "glob": "*.go"}, proto.Limits{},
			"other/src/gen_y.go:1: needle not under src/.gitignore\nsrc/gen_keep.go:1: needle kept"},
		{"glob with slash", map[string]any{"pattern": "needle", "glob": "src/**"}, proto.Limits{},
			"src/gen_keep.go:1: needle kept\nsrc/needle.txt:3: and a needle there\nsrc/needle.txt:4: needle needle twice on one line"},
		{"max results arg", map[string]any{"pattern": "needle", "path": "src", "max_results": 2}, proto.Limits{MaxResults: 50},
			"src/gen_keep.go:1: needle kept\nsrc/needle.txt:3: and a needle there\n[stopped after 2 matches; more exist — narrow the pattern, path or glob]"},
		{"binary files do not count toward the cap", map[string]any{"pattern": "needle", "max_results": 1}, proto.Limits{},
			"crlf.txt:1: a needle\n[stopped after 1 matches; more exist — narrow the pattern, path or glob]"},
		{"max results limit", map[string]any{"pattern": "needle", "path": "src"}, proto.Limits{MaxResults: 1},
			"src/gen_keep.go:1: needle kept\n[stopped after 1 matches; more exist — narrow the pattern, path or glob]"},
		{"exactly max is not more", map[string]any{"pattern": "needle", "path": "src"}, proto.Limits{MaxResults: 3},
			"src/gen_keep.go:1: needle kept\nsrc/needle.txt:3: and a needle there\nsrc/needle.txt:4: needle needle twice on one line"},
		{"empty pattern", map[string]any{"pattern": "", "path": "no-newline.txt"}, proto.Limits{}, "no-newline.txt:1: one\nno-newline.txt:2: two"},
		{"empty lines", map[string]any{"pattern": "^$", "path": "src/main.go"}, proto.Limits{}, "src/main.go:2: "},
		{"no matches", map[string]any{"pattern": "haystack", "path": "src"}, proto.Limits{}, "no matches for haystack in src"},
		{"invalid", map[string]any{"pattern": "a(b"}, proto.Limits{}, "error: invalid pattern: error parsing regexp: missing closing ): `a(b`"},
		{"pattern too long", map[string]any{"pattern": strings.Repeat("a", maxPatternBytes+1)}, proto.Limits{},
			"error: pattern is too long (524289 bytes; the limit is 524288); split an alternation into several greps of fewer alternatives"},
		{"invalid glob", map[string]any{"pattern": "a", "glob": "[x"}, proto.Limits{}, "error: invalid glob pattern: [x"},
		{"missing", map[string]any{"pattern": "a", "path": "nope"}, proto.Limits{}, "error: no such file or directory: nope"},
		{"fifo", map[string]any{"pattern": "a", "path": "fifo"}, proto.Limits{}, "error: not a regular file: fifo (named pipe)"},
		{"escape", map[string]any{"pattern": "a", "path": "escape"}, proto.Limits{}, "error: path escapes the sandbox through a symlink: escape"},
	})
}

func TestGrepNestedIgnoreFromSubfolder(t *testing.T) {
	// Starting below the root, the root's .gitignore still applies.
	fsys := fstest.MapFS{
		".gitignore":       file("secret*\n"),
		"a/.gitignore":     file("tmp/\n"),
		"a/b/secret.txt":   file("x\n"),
		"a/b/public.txt":   file("x\n"),
		"a/b/tmp/t.txt":    file("x\n"),
		"a/b/c/.gitignore": file("*.txt\n"),
		"a/b/c/d.txt":      file("x\n"),
		"a/b/c/d.md":       file("x\n"),
	}
	got := call(t, fsys, proto.Grep, map[string]any{"pattern": "^x$", "path": "a/b"}, proto.Limits{}).Text
	if want := "a/b/c/d.md:1: x\na/b/public.txt:1: x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = call(t, fsys, proto.Glob, map[string]any{"pattern": "**/*.txt", "path": "a"}, proto.Limits{}).Text
	if want := "a/b/public.txt"; got != want {
		t.Errorf("glob: got %q, want %q", got, want)
	}
}

// TestGrepBlocks crosses the read buffer's edges: line numbers stay right
// across blocks, a line longer than the buffer is searched whole and
// prints once, and a NUL in a later block makes the whole file binary.
func TestGrepBlocks(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := 1; i <= 40000; i++ {
		if i%9973 == 0 {
			fmt.Fprintf(&b, "line %d has the needle\n", i)
			want = append(want, fmt.Sprintf("big.txt:%d: line %d has the needle", i, i))
		} else {
			fmt.Fprintf(&b, "line %d is hay\n", i)
		}
	}
	long := strings.Repeat("needle ", 3*grepBufSize/7) // ~3 buffers, one line
	b.WriteString(long + "\n")
	want = append(want, "big.txt:40001: "+long[:proto.MaxLineBytes]+"…")
	b.WriteString("after the long line: needle\n")
	want = append(want, "big.txt:40002: after the long line: needle")
	fsys := fstest.MapFS{"big.txt": file(b.String()), "bigbin.txt": file(b.String() + "\x00 late NUL, needle\n")}
	got := call(t, fsys, proto.Grep, map[string]any{"pattern": "needle"}, proto.Limits{}).Text
	if got != strings.Join(want, "\n") {
		t.Errorf("got:\n%.2000s\nwant:\n%.2000s", got, strings.Join(want, "\n"))
	}
	// The same with a regexp that is not a plain literal.
	got = call(t, fsys, proto.Grep, map[string]any{"pattern": "n[e]edle"}, proto.Limits{}).Text
	if got != strings.Join(want, "\n") {
		t.Errorf("regexp: got:\n%.2000s", got)
	}
	// Named explicitly, the binary file says it matches, and where its NUL is.
	got = call(t, fsys, proto.Grep, map[string]any{"pattern": "needle", "path": "bigbin.txt"}, proto.Limits{}).Text
	if want := sprintf("bigbin.txt: binary file matches (a NUL byte at offset %d); grep shows no lines of binary files", len(b.String())); got != want {
		t.Errorf("explicit binary: got %q, want %q", got, want)
	}
}

// lineGrep is the reference: the original pattern run line by line.
func lineGrep(re *regexp.Regexp, data []byte) []int {
	var hits []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		if re.Match(sc.Bytes()) {
			hits = append(hits, n)
		}
	}
	return hits
}

// blockGrep runs the block matcher and returns the line numbers it reports.
func blockGrep(t testing.TB, pattern string, ignoreCase bool, data []byte) ([]int, error) {
	m, err := match.Compile(pattern, ignoreCase)
	if err != nil {
		return nil, err
	}
	fsys := fstest.MapFS{"f": &fstest.MapFile{Data: data}}
	g := &grepper{fsys: fsys, m: m, buf: make([]byte, 64), maxBuf: maxLineBuf, max: 1 << 30, mode: proto.GrepContent}
	if _, _, err := g.searchFile("f"); err != nil {
		t.Fatal(err)
	}
	var hits []int
	for _, l := range strings.Split(strings.TrimSuffix(string(g.out), "\n"), "\n") {
		var n int
		if l != "" {
			fmt.Sscanf(strings.TrimPrefix(l, "f:"), "%d:", &n)
			hits = append(hits, n)
		}
	}
	return hits, nil
}

const equivText = "alpha beta\n\nGamma delta\n  indented line\nend.\nfoo\tbar\nfoo\nbar\nÄrger über Öl\nx\n\nlast line without newline"

func TestGrepMatchesLineByLine(t *testing.T) {
	for _, p := range []string{
		"a", "^", "$", "^$", "^a", "a$", `\Aa`, `e\z`, ".", ".*", "(?s).+", `[^a]+`, `\s+`, `foo\s+bar`, `foo\nbar`,
		`\bbar\b`, `\B`, `(?m)^foo$`, `[[:space:]]`, `\pL+`, `(?i)ärger`, `x|^$`, `[\n]`, `[^\n]`, `\D\d`, `line$`,
		`a{2,}`, `(foo|bar)$`, `^.{0,3}$`, `[a-z]+ line`, `al(pha)+ beta`, `\w+ta\b`, `(?i)LINE`, `ent.*line`,
		`without newline$`, `^Gamma`, `over\b`,
	} {
		for _, ic := range []bool{false, true} {
			ref := p
			if ic {
				ref = "(?i)" + p
			}
			want := lineGrep(regexp.MustCompile(ref), []byte(equivText))
			got, err := blockGrep(t, p, ic, []byte(equivText))
			if err != nil {
				t.Fatalf("%q: %v", p, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%q (ignore case %v): block grep lines %v, line grep %v", p, ic, got, want)
			}
		}
	}
}

// FuzzGrepPattern: any pattern and glob give an answer, never a panic, and
// any valid pattern finds the same lines as running it line by line.
func FuzzGrepPattern(f *testing.F) {
	for _, s := range []string{"a", "(", "[^a]", `\s+$`, "(?s).", "**", "[", `\`, "{a,b}", "^$", `x*`, "(?i)Ä",
		// Folded letters with forms beyond ASCII (the long s, the Kelvin sign).
		"(?i)assess", "(?i)kelvin", "(?i)ſ", "(?i)sss", "(?i)SK"} {
		f.Add(s, "*.go")
	}
	text := equivText + "\na\u017f\u017fe\u017f\u017f ASSESS aSsEsS\nasses\u017f \u212aELVIN s\u212a \u017fk \u00df\u017fS\n"
	fsys := fstest.MapFS{
		"a.go":         file(text),
		"d/b.txt":      file("needle\n"),
		"d/.gitignore": file("[\n!\n\\\n"),
	}
	f.Fuzz(func(t *testing.T, pattern, glob string) {
		resp := Run(fsys, proto.Request{ID: 1, Tool: proto.Grep, Args: mustJSON(t, map[string]any{"pattern": pattern, "glob": glob})})
		if strings.Contains(resp.Text, "internal error") {
			t.Fatalf("pattern %q glob %q: %s", pattern, glob, resp.Text)
		}
		Run(fsys, proto.Request{ID: 1, Tool: proto.Glob, Args: mustJSON(t, map[string]any{"pattern": glob})})
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		got, err := blockGrep(t, pattern, false, []byte(text))
		if err != nil && strings.Contains(err.Error(), "surrogate") {
			return // refused on purpose
		}
		if err != nil {
			t.Fatalf("%q compiles with regexp but not for grep: %v", pattern, err)
		}
		if want := lineGrep(re, []byte(text)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: block grep lines %v, line grep %v", pattern, got, want)
		}
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goroot finds Go's source tree for the benchmark; only tests may run the
// go command.
func goroot(b *testing.B) string {
	if r := os.Getenv("GOROOT"); r != "" {
		return r // set by make bench-guest, where there is no go command
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	root := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(root, "src", "runtime")); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	return root
}

// BenchmarkGrep greps Go's own source tree, the corpus README.md's
// performance table measures GNU grep on, natively.
func BenchmarkGrep(b *testing.B) {
	fsys := os.DirFS(filepath.Join(goroot(b), "src"))
	for _, bc := range []struct{ name, pattern string }{
		{"nohit-regexp", `zq[0-9]+xj_nohit`},
		{"nohit-literal", "zqxj_no_such_identifier"},
		{"nohit-class", `[A-Z]\w+_NOHIT\d`},
		{"literal", `func main\(\) \{`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := mustJSON(b, proto.GrepArgs{Pattern: bc.pattern, MaxResults: 1 << 20})
			for b.Loop() {
				resp := Run(fsys, proto.Request{Tool: proto.Grep, Args: args})
				if resp.IsError {
					b.Fatal(resp.Text)
				}
			}
		})
	}
}

func TestGrepLongLineShowsTheMatch(t *testing.T) {
	fsys := fstest.MapFS{
		"min.js": file(strings.Repeat("x", 1000) + "needle" + strings.Repeat("y", 1000) + "\nneedle at the start\n"),
	}
	got := call(t, fsys, proto.Grep, map[string]any{"pattern": "needle"}, proto.Limits{}).Text
	want := "min.js:1: …" + strings.Repeat("x", hitContext) + "needle" + strings.Repeat("y", proto.MaxLineBytes-hitContext-6) + "…\n" +
		"min.js:2: needle at the start"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func FuzzCountNewlines(f *testing.F) {
	f.Add([]byte("a\nb\n\n\xff\x8a\x0a\x0b\x09 and a longer tail\n\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := range min(len(b), 9) { // every alignment of the tail
			if got, want := countNewlines(b[i:]), bytes.Count(b[i:], []byte{'\n'}); got != want {
				t.Fatalf("countNewlines(%q) = %d, want %d", b[i:], got, want)
			}
		}
	})
}

// BenchmarkGrepManyHits is the answers with many hits (content mode, up
// to the most max_results allows) natively, as one shard of two makes
// them (what the host merges).
func BenchmarkGrepManyHits(b *testing.B) {
	fsys := os.DirFS(filepath.Join(goroot(b), "src"))
	for _, bc := range []struct{ name, pattern, mode, path string }{
		{"dotstar", `.*`, "", ""},
		{"hex40", `[0-9a-f]{40}`, "", ""},
		{"hex0x", `0x[0-9a-fA-F]{8,}`, "", ""},
		{"hexescape", `\\x[0-9a-f]{2}`, "", ""},
		{"caret-count", `^`, proto.GrepCount, "runtime"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := mustJSON(b, proto.GrepShardArgs{GrepArgs: proto.GrepArgs{Pattern: bc.pattern, OutputMode: bc.mode, Path: bc.path, MaxResults: proto.MaxMaxResults}, Shard: 0, Shards: 2})
			for b.Loop() {
				resp := Run(fsys, proto.Request{Tool: proto.GrepShard, Args: args})
				if resp.IsError {
					b.Fatal(resp.Text)
				}
			}
		})
	}
}
