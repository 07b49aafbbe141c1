package match

import (
	"bytes"
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
