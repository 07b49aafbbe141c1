package match

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchClasses are the classes of pattern grep must be fast for, as in
// cmd/moat-bench.
var benchClasses = []struct {
	name, pattern string
	ignoreCase    bool
}{
	{"literal", "func NewReplacer", false},
	{"case-insensitive", "todo", true},
	{"alternation", `(Errorf|Fatalf)\(`, false},
	{"class-only", `[0-9]{4}-[0-9]{2}-[0-9]{2}`, false},
	{"anchored", `^\t+return \w+, nil$`, false},
	{"word", `\bctx\b`, false},
	{"unicode", `\p{Greek}+`, false},
	{"many-hits", `err`, false},
	{"many-hits-regex", `\w+\(`, false},
	{"no-literal", `[a-z]+[0-9]+[A-Z]`, false},
	{"counted", `[^ ]{100,}`, false},
	// Folded literals whose letters have forms beyond ASCII (issue 34).
	{"folded-s", `assess`, true},
	{"folded-k", `kelvin`, true},
	{"folded-sharp-s", `traße`, true},
	// The counted classes of issue 34.
	{"counted-upper", `[A-Z_]{12,}`, false},
	{"hex-escape", `\\x[0-9a-f]{2}`, false},
	{"hex-0x", `0x[0-9a-fA-F]{8,}`, false},
	{"date-word", `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`, false},
}

// benchCorpus is up to 8 MB of Go's own source: the *.go files under
// $GOROOT/src (set by `make bench-guest`) in walk order.
func benchCorpus(b testing.TB) []byte {
	return corpus(b, 8<<20)
}

// corpus is up to limit bytes of Go's own source.
func corpus(b testing.TB, limit int) []byte {
	root := os.Getenv("GOROOT")
	if root == "" {
		root = runtime.GOROOT()
	}
	if root == "" {
		b.Skip("no GOROOT to read a corpus from")
	}
	var buf bytes.Buffer
	filepath.WalkDir(filepath.Join(root, "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || buf.Len() > limit {
			return fs.SkipAll
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".go") {
			data, err := os.ReadFile(p)
			if err == nil {
				buf.Write(data)
			}
		}
		return nil
	})
	if buf.Len() == 0 {
		b.Skip("no Go source under " + root)
	}
	return buf.Bytes()
}

// blocks cuts text into blocks of whole lines of about 256 KiB, grep's
// buffer.
func blocks(text []byte) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		n := min(len(text), 256<<10)
		if nl := bytes.LastIndexByte(text[:n], '\n'); nl >= 0 && n < len(text) {
			n = nl + 1
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// TestCorpusMatchesRegexp compares the matcher with regexp, line by line,
// on a few MB of real source for every benchmark class and then some.
func TestCorpusMatchesRegexp(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a corpus")
	}
	size := 1 << 20
	if runtime.GOOS == "wasip1" {
		size = 256 << 10 // regexp line by line is slow there
	}
	text := corpus(t, size)
	for _, c := range benchClasses {
		check(t, c.pattern, c.ignoreCase, text)
	}
	for _, p := range []string{`(?i)errorf|fatalf`, `^\s*//`, `[A-Z]{3,}`, `\d+\.\d+`, `\w+\s*:=\s*\w+\(`,
		`(?i)kind`, `\bfunc\b.*\berror\b$`, `[^\x00-\x7f]`, `.{100,}`, `^$`, `"[^"]*"`, `x*`,
		// The hex and counted classes of issue 34.
		`0x[0-9a-fA-F]{8,}`, `[0-9a-f]{40}`, `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`, `[A-Z_]{12,}`, `\\x[0-9a-f]{2}`,
		`[a-z]{10}`, `[A-Z]+[0-9]{4}`, `[0-9]{4}$`} {
		check(t, p, false, text)
		check(t, p, true, text)
	}
	// The cliff classes, with keyword lists of 100 and 300 words, on less
	// text: regexp deciding each line of them (the reference) is slow.
	small := text[:min(len(text), size/32)]
	words := []int{100, 300}
	if runtime.GOOS == "wasip1" {
		words = words[:1]
	}
	for _, words := range words {
		for _, p := range cliffPatterns(words) {
			check(t, p, false, small)
		}
	}
	check(t, keywordList(300), true, append(keywordText(300), small...))
}

func BenchmarkNext(b *testing.B) {
	text := benchCorpus(b)
	bl := blocks(text)
	for _, c := range benchClasses {
		b.Run(c.name, func(b *testing.B) {
			m, err := Compile(c.pattern, c.ignoreCase)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			hits := 0
			for b.Loop() {
				hits = 0
				for _, blk := range bl {
					for pos := 0; pos < len(blk); {
						_, e, ok := m.Next(blk[pos:])
						if !ok {
							break
						}
						hits++
						pos += e + 1
					}
				}
			}
			b.ReportMetric(float64(hits), "lines")
		})
	}
}

// jsonLine is one line of minified JSON of about size bytes (an array of
// records, as cmd/moat-bench's bundle.json), whose last record alone has
// "last":true.
func jsonLine(size int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for id := 0; b.Len() < size; id++ {
		if id > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"Word%d Other%d","tags":["a%d","b"],"value":%d.%06d,"sha":"%016x%016x%08x","ok":%v}`,
			id, id%97, id%89, id%7, id%1000, id*7919%1000000, uint64(id)*0x9E3779B97F4A7C15, uint64(id)*0xC2B2AE3D27D4EB4F, uint32(id*2654435761), id%3 == 0)
	}
	b.WriteString(`,{"id":0,"last":true}]`)
	return b.Bytes()
}

// BenchmarkLongLine searches a line of 8 MB of minified JSON (issue 34's
// "one 50 MB line" rows, smaller): counting (Next) and showing the match
// (Next, then Start), with the reverse inner literal strategy
// (revinner.go) and without it (the DFA over the whole line). The first
// pattern's one match is at the line's end, the second's at its start;
// the third has none, and its literal occurs every few bytes.
func BenchmarkLongLine(b *testing.B) {
	line := jsonLine(8 << 20)
	for _, p := range []string{`"id":[0-9]+,"last":true`, `"sha":"[0-9a-f]{40}"`, `[A-Z]{3}":`} {
		hit := p[0] == '"'
		for _, mode := range []string{"count", "content"} {
			for _, strategy := range []string{"revinner", "dfa"} {
				b.Run(fmt.Sprintf("%s/%s/%s", p, mode, strategy), func(b *testing.B) {
					m, err := Compile(p, false)
					if err != nil {
						b.Fatal(err)
					}
					if strategy == "dfa" {
						m.rev = nil
					}
					b.SetBytes(int64(len(line)))
					for b.Loop() {
						s, e, ok := m.Next(line)
						if ok != hit || ok && (s != 0 || e != len(line)) {
							b.Fatalf("Next = %d, %d, %v", s, e, ok)
						}
						if ok && mode == "content" && m.Start(line[s:e]) < 0 {
							b.Fatal("no start")
						}
					}
				})
			}
		}
	}
}
