package tools

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/moatdev/moat/guest/match"
	"github.com/moatdev/moat/guest/proto"
)

// keywordWords returns n distinct pseudo-words of 3-10 ASCII letters
// (mixed case, many holding k or s, whose case-folded forms include the
// Kelvin sign and the long s).
func keywordWords(rng *rand.Rand, n int) []string {
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		b := make([]byte, 3+rng.IntN(8))
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyzkss"[rng.IntN(29)]
			if rng.IntN(9) == 0 {
				b[i] -= 'a' - 'A'
			}
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// foldKey is s with every rune replaced by the least rune of its
// simple-folding orbit: two strings are equal under regexp's (?i) exactly
// when their foldKeys are.
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// containsAny is the oracle of a literal alternation: whether line holds
// one of words (a set keyed by the words, of the lengths in lens) at some
// rune boundary.
func containsAny(line string, words map[string]bool, lens []int) bool {
	for i := range line {
		for _, n := range lens {
			if i+n <= len(line) && words[line[i:i+n]] {
				return true
			}
		}
	}
	return false
}

// TestGrepKeywordList: a keyword list of 10,000 words (about 75 KB, past
// the 16 KiB patterns were once bounded to) answers, case-sensitive and
// ignoring case, exactly as the pattern's meaning says line by line (a
// line matches when it holds one of the words; under (?i) compared by
// their simple-folding orbits, so the Kelvin sign is a k and the long s
// an s), in content and count mode; and, where ripgrep is installed, as
// ripgrep answers.
func TestGrepKeywordList(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	vocab := keywordWords(rng, 20_000)
	list := vocab[:10_000] // half the text's words are in the list
	pattern := strings.Join(list, "|")
	if len(pattern) <= 16<<10 {
		t.Fatalf("the list is only %d bytes", len(pattern))
	}
	// The text: lines of words of the vocabulary and of none (parts of
	// words, the folded letters beyond ASCII), so lines hold a word inside
	// a longer one, across a space, and not at all.
	root := t.TempDir()
	for f := range 3 {
		var b strings.Builder
		for range 300 {
			for k := rng.IntN(5); k > 0; k-- {
				w := vocab[10_000+rng.IntN(10_000)] // not in the list
				switch rng.IntN(10) {
				case 0:
					w = list[rng.IntN(len(list))] // in it
				case 1:
					w = strings.ToUpper(list[rng.IntN(len(list))])
				case 2:
					w = strings.NewReplacer("k", "\u212a", "s", "\u017f", "S", "\u017f").Replace(list[rng.IntN(len(list))])
				case 3:
					w = w[:len(w)/2]
				}
				b.WriteString(w)
				if rng.IntN(3) > 0 {
					b.WriteByte(' ')
				}
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.txt", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys := os.DirFS(root)
	rg, why := command("rg", "the comparison with ripgrep")
	for _, ignoreCase := range []bool{false, true} {
		words := map[string]bool{}
		lens := []int{}
		for _, w := range list {
			if ignoreCase {
				w = foldKey(w)
			}
			words[w] = true
			if !slices.Contains(lens, len(w)) {
				lens = append(lens, len(w))
			}
		}
		var want []string
		counts := map[string]int{}
		for f := range 3 {
			name := fmt.Sprintf("f%d.txt", f)
			data, _ := os.ReadFile(filepath.Join(root, name))
			for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				if ignoreCase {
					line = foldKey(line)
				}
				if containsAny(line, words, lens) {
					want = append(want, fmt.Sprintf("%s:%d", name, i+1))
					counts[name]++
				}
			}
		}
		var wantCounts []string
		for name, n := range counts {
			wantCounts = append(wantCounts, fmt.Sprintf("%s:%d", name, n))
		}
		slices.Sort(want)
		slices.Sort(wantCounts)
		if len(want) < 100 || len(want) > 850 {
			t.Fatalf("ignore case %v: %d of 900 lines match: the test's text is off", ignoreCase, len(want))
		}
		for _, mode := range []string{proto.GrepContent, proto.GrepCount} {
			args := proto.GrepArgs{Pattern: pattern, IgnoreCase: ignoreCase, OutputMode: mode, MaxResults: proto.MaxMaxResults}
			resp := Run(fsys, proto.Request{Tool: proto.Grep, Args: mustJSON(t, args)})
			if resp.IsError || strings.Contains(resp.Text, "[stopped after") {
				t.Fatalf("ignore case %v, %s: %.300s", ignoreCase, mode, resp.Text)
			}
			got := rgKeys(resp.Text, mode, nil, t)
			exp := want
			if mode == proto.GrepCount {
				exp = wantCounts
			}
			if !slices.Equal(got, exp) {
				t.Errorf("ignore case %v, %s:\nmoat only: %v\noracle only: %v", ignoreCase, mode, minus(got, exp), minus(exp, got))
			}
			if why != "" {
				continue
			}
			flags := []string{"--no-heading", "--color", "never", "--no-config", "--regex-size-limit", "1G", "--dfa-size-limit", "1G"}
			if mode == proto.GrepContent {
				flags = append(flags, "-n")
			} else {
				flags = append(flags, "-c")
			}
			if ignoreCase {
				flags = append(flags, "-i")
			}
			cmd := exec.Command(rg, append(flags, "-e", pattern)...)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil && cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("rg: %v", err)
			}
			if rgGot := rgKeys(string(out), mode, nil, t); !slices.Equal(got, rgGot) {
				t.Errorf("ignore case %v, %s, against ripgrep:\nmoat only: %v\nrg only: %v", ignoreCase, mode, minus(got, rgGot), minus(rgGot, got))
			}
		}
	}
	if why != "" {
		t.Log(why)
	}
}

// TestGrepPatternTooLarge: a pattern past the memory bound of its program
// is refused with that bound and how to split it, and the halves it says
// to split it into answer.
func TestGrepPatternTooLarge(t *testing.T) {
	list := keywordWords(rand.New(rand.NewPCG(34, 2)), 40_000)
	fsys := os.DirFS(t.TempDir())
	resp := call(t, fsys, proto.Grep, map[string]any{"pattern": strings.Join(list, "|")}, proto.Limits{})
	want := fmt.Sprintf("instructions, and the limit is %d (the memory one pattern may take, not its length); split its alternation into 3 or more greps of about 13334 alternatives each", match.MaxProgInsts)
	if !resp.IsError || !strings.HasPrefix(resp.Text, "error: pattern is too large: it compiles to ") || !strings.HasSuffix(resp.Text, want) {
		t.Fatalf("got %q\nwant ...%q", resp.Text, want)
	}
	for _, part := range [][]string{list[:13_334], list[26_668:]} {
		if resp := call(t, fsys, proto.Grep, map[string]any{"pattern": strings.Join(part, "|")}, proto.Limits{}); resp.IsError {
			t.Fatalf("a part of the split: %.200s", resp.Text)
		}
	}
	// Not an alternation: counted repetitions (a 1.7 KB pattern).
	resp = call(t, fsys, proto.Grep, map[string]any{"pattern": strings.Repeat(`[a-f]{1000}`, 140)}, proto.Limits{})
	if !resp.IsError || !strings.HasSuffix(resp.Text, "make it smaller (a counted repetition {n} compiles to n copies of what it repeats)") {
		t.Fatalf("got %.300q", resp.Text)
	}
}

// TestGrepCountEveryLine: a count of a pattern that matches every line
// (`^`, `$`, `.*`; counted as lines) agrees with `^.*$`, which matches
// every line too but is decided line by line, and with the lines
// themselves: the last
// line without a newline, an empty file, empty lines, CRLF, a line longer
// than the buffer, a binary file (none).
func TestGrepCountEveryLine(t *testing.T) {
	long := strings.Repeat("minified;", 40_000)
	fsys := fstest.MapFS{
		"a.txt":     file("x\ny\n"),
		"b.txt":     file("x\ny"),
		"c.txt":     file(""),
		"d.txt":     file("\n\n\n"),
		"e.txt":     file("a\r\nb\r\n"),
		"f.js":      file(long + "\n" + long + "\nz"),
		"bin.dat":   file("x\n\x00y\n"),
		"sub/g.txt": file(strings.Repeat("line\n", 70_000)),
	}
	want := "a.txt:2\nb.txt:2\nd.txt:3\ne.txt:2\nf.js:3\nsub/g.txt:70000"
	for _, p := range []string{`^.*$`, "^", "$", ".*", "x?", "", "(?i)^", `\A`, `^|zz`, `\z`} {
		got := call(t, fsys, proto.Grep, map[string]any{"pattern": p, "output_mode": "count"}, proto.Limits{}).Text
		if got != want {
			t.Errorf("%q: got\n%s\nwant\n%s", p, got, want)
		}
	}
	if m, _ := match.Compile(`^.*$`, false); m.EveryLine() {
		t.Error(`^|\b is counted as lines: the comparison above tests nothing`)
	}
	for _, p := range []string{"^", "$", ".*", "x?", "", `\A`, `^|zz`, `$|^`, `\z`} {
		if m, _ := match.Compile(p, false); !m.EveryLine() {
			t.Errorf("%q is not counted as lines", p)
		}
	}
	for _, p := range []string{"^$", "^x", `\b`, ".", "x*y", `x$|^y`, `x$`, `^\z`} {
		if m, _ := match.Compile(p, false); m.EveryLine() {
			t.Errorf("%q is counted as lines", p)
		}
	}
}
