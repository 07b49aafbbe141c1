package tools

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
)

// TestGrepAgreesWithRipgrep generates trees (hits, CRLF, invalid UTF-8,
// Greek and Korean, lines longer than the buffer, binary files with a NUL at
// different offsets) and compares grep with `rg --hidden -g '!.git'` hit for
// hit, in each output mode. Binary files are where the two differ on
// purpose: grep shows nothing of a file with a NUL anywhere, ripgrep shows
// the hits it met before the buffer holding the NUL; so binary files are
// left out of the comparison, grep must show none of them, and ripgrep
// none whose NUL is in its first bytes.
func TestGrepAgreesWithRipgrep(t *testing.T) {
	rg, why := command("rg", "the comparison with ripgrep")
	if why != "" {
		t.Skip(why)
	}
	patterns := []struct {
		pattern    string
		ignoreCase bool
	}{
		{"hit", false}, {"hit", true}, {"^hit", false}, {"t$", false}, {"h.t", false}, {"^$", false},
		{"[^a-z ]", false}, {"caf.", false}, {"caf", false}, {"κόσμε", false}, {"ΚΌΣΜΕ", true}, {`\p{Greek}+`, false},
		{`\p{Hangul}{2}`, false}, {"검색", false}, {"x|검", false}, {"a.*b", false}, {"[^x]{3}", false}, {`\s$`, false},
		{"^.{3}$", false}, {".{80,}", false}, {"(?i)σ", false}, {`\r`, false}, {"[À-ÿ]", false}, {"\uFFFD", false},
		// The classes of issue 34: a hex class, letters whose
		// folded forms are beyond ASCII (ß, the Kelvin sign, the long s).
		{`[0-9a-f]{8}`, false}, {"(?i)straße", false}, {"straße", true}, {"(?i)kelvin", false}, {"(?i)ss", false},
		{"(?i)assess", false}, {"assess", true}, {"(?i)ſ", false}, {"(?i)sss", false}, {"(?i)SK", false},
		// Its hex and counted classes, and regexes over one long line of
		// minified JSON (dist/data.json).
		{`0x[0-9a-fA-F]{8,}`, false}, {`\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`, false}, {`[A-Z_]{12,}`, false}, {`\\x[0-9a-f]{2}`, false},
		{`"id":[0-9]+,"last":true`, false}, {`"sha":"[0-9a-f]{40}"`, false},
		// Runs of byte classes and folded literals found in one pass
		// (guest/match's classSeq and foldLit), over the long lines too.
		{`[a-z]{5}`, false}, {`[A-Z]+[0-9]{4}`, false}, {`[a-f0-9]{16,}`, false}, {`[A-Z_]{6}$`, false},
		{`[a-z]{8};`, false}, {`(?i)minified;min`, false}, {`(?i)todo`, false}, {`(?i)elvin`, false},
		{`(?i)kkskSK`, false}, {`ASSESS`, true},
	}
	for seed := uint64(1); seed <= 2; seed++ {
		root := t.TempDir()
		binaries := writeRgTree(t, root, rand.New(rand.NewPCG(seed, 7)))
		fsys := os.DirFS(root)
		for _, p := range patterns {
			for _, mode := range []string{proto.GrepContent, proto.GrepFiles, proto.GrepCount} {
				args := proto.GrepArgs{Pattern: p.pattern, IgnoreCase: p.ignoreCase, OutputMode: mode, MaxResults: proto.MaxMaxResults}
				resp := Run(fsys, proto.Request{Tool: proto.Grep, Args: mustJSON(t, args)})
				if resp.IsError {
					t.Fatalf("%+v: %s", args, resp.Text)
				}
				if strings.Contains(resp.Text, "[stopped after") {
					t.Fatalf("%+v: the tree is too large for a full answer", args)
				}
				flags := []string{"--hidden", "-g", "!.git", "--no-heading", "--color", "never", "--no-config"}
				switch mode {
				case proto.GrepContent:
					flags = append(flags, "-n")
				case proto.GrepFiles:
					flags = append(flags, "-l")
				case proto.GrepCount:
					flags = append(flags, "-c")
				}
				if p.ignoreCase {
					flags = append(flags, "-i")
				}
				cmd := exec.Command(rg, append(flags, "-e", p.pattern)...)
				cmd.Dir = root
				out, err := cmd.Output()
				if err != nil && cmd.ProcessState.ExitCode() != 1 {
					t.Fatalf("rg %q: %v", p.pattern, err)
				}
				want := rgKeys(string(out), mode, binaries, t)
				got := rgKeys(resp.Text, mode, nil, t)
				if !slices.Equal(got, want) {
					t.Errorf("seed %d, %q (ignore case %v), %s:\nmoat: %v\nrg:   %v", seed, p.pattern, p.ignoreCase, mode, minus(got, want), minus(want, got))
				}
			}
		}
	}
}

// rgKeys reduces an answer to sorted "path:line" (content), "path"
// (files_with_matches) or "path:N" (count) keys; lines of files in skip
// are dropped, after checking that ripgrep showed none of a file whose
// NUL comes early.
func rgKeys(text, mode string, skip map[string]int, t *testing.T) []string {
	var keys []string
	hit := regexp.MustCompile(`^([^:]+):(\d+):`)
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "no matches for ") || strings.Contains(l, ": WARNING: ") {
			continue
		}
		key, path := l, l
		switch mode {
		case proto.GrepContent:
			m := hit.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("not a hit line: %q", l)
			}
			key, path = m[1]+":"+m[2], m[1]
		case proto.GrepCount:
			path = l[:strings.LastIndexByte(l, ':')]
		}
		if at, ok := skip[path]; ok {
			if at < sniffLen {
				t.Errorf("ripgrep showed %q of a file with a NUL at offset %d", l, at)
			}
			continue
		}
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// writeRgTree writes a random tree under root and returns its binary files
// with the offset of their NUL.
func writeRgTree(t *testing.T, root string, rng *rand.Rand) map[string]int {
	words := []string{"hit", "miss", "Hit", "x", "", "tab\t", "caf\xe9", "café", "naïve", "κόσμε", "ΚΌΣΜΕ", "Οδυσσεύς",
		"검색", "한국어", "a b", "ab", "\uFFFD", "σς", "HIT"}
	line := func() string {
		var b strings.Builder
		for k := rng.IntN(5); k > 0; k-- {
			if b.Len() > 0 && rng.IntN(2) == 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	write := func(name string, data []byte) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 24; i++ {
		var b bytes.Buffer
		eol := "\n"
		if i%4 == 1 {
			eol = "\r\n"
		}
		for n := rng.IntN(60); n > 0; n-- {
			b.WriteString(line() + eol)
		}
		if rng.IntN(3) == 0 {
			b.WriteString(line()) // no newline at the end
		}
		dir := []string{"", "src/", "src/deep/", ".hidden/", "docs/"}[i%5]
		write(fmt.Sprintf("%sf%02d.txt", dir, i), b.Bytes())
	}
	// Lines longer than the buffer, hits at their start, middle and end.
	long := strings.Repeat("minified;", 40_000) // 360 KB: past the 256 KiB buffer
	write("dist/app.min.js", []byte("hit "+long+"κόσμε"+long+" hit\nab\n"+long+"\n"))
	// Binary files: the NUL at the start, in the head, past the head, and
	// past grep's and ripgrep's first buffers.
	binaries := map[string]int{}
	for _, at := range []int{0, 100, 9000, 70_000, 300_000} {
		var b bytes.Buffer
		for b.Len() < at {
			b.WriteString(line() + "\n")
		}
		b.WriteString("hit\x00 hit\n")
		for n := 0; n < 20; n++ {
			b.WriteString(line() + "\n")
		}
		name := fmt.Sprintf("bin/nul%d.dat", at)
		write(name, b.Bytes())
		binaries[name] = bytes.IndexByte(b.Bytes(), 0)
	}
	// Letters whose folded forms are beyond ASCII, and hex.
	write("docs/fold.txt", []byte("Straße\nSTRASSE\nstra\u017fe\nSTRA\u1e9eE\n\u212aelvin\nkelvin KELVIN\ndeadbeef0123 cafe\n0x1F2E3D4C\nmiss\n"+
		"a\u017f\u017fe\u017f\u017f ASSESS\naSsEsS\nasses\u017f\n\u017f alone\ns\u212a S\u212a \u017fk\nsss \u00df\u017fS\n"+
		"TODO: todo ToDo \u212a\u212asks\u017f\u212a kks\u212aSK\n"))
	// One line of minified JSON past the 256 KiB buffer, the record
	// that ends it alone "last", and a line of the counted classes.
	rec := `{"id":12,"name":"Caf\u00e9 Hit","sha":"3f786850e387550fdab836ed7e6dc881de23001b","ok":true},`
	write("dist/data.json", []byte("["+strings.Repeat(rec, 4000)+`{"id":7,"last":true}]`+"\n2024-01-31 MAX_LINE_BYTES \\x1b 0xDEADBEEF12 20240131\n"))
	write(".git/HEAD", []byte("hit in git\n"))
	return binaries
}
