package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moatdev/moat/host/confine"
)

// The generated inputs of the cliff rows: text made of pseudo-words (the
// same every run: a fixed seed), the keyword lists searched in it, a file
// of a few very long lines, and Latin-1 text.

// genWords returns n pseudo-words, built from syllables so that they look
// like words of a language: letters at something like English rates.
func genWords(r *rand.Rand, n int) []string {
	onsets := []string{"", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "ch", "th", "pl", "gr", "qu", "x", "z", "k", "j", "y"}
	vowels := []string{"a", "e", "i", "o", "u", "ea", "ou", "ai", "io", "y"}
	codas := []string{"", "", "n", "r", "s", "t", "l", "nd", "st", "ng", "x", "ck", "m"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for k := 1 + r.IntN(3); k > 0; k-- {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
			b.WriteString(codas[r.IntN(len(codas))])
		}
		if w := b.String(); len(w) > 1 && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// genText returns about size bytes of lines of words (Zipf-distributed, so
// a few are common and most rare), with capitals, digits and punctuation.
func genText(size int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := genWords(r, 20000)
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	var b bytes.Buffer
	b.Grow(size + 200)
	for b.Len() < size {
		for n := r.IntN(16); n > 0; n-- {
			w := words[z.Uint64()]
			switch r.IntN(20) {
			case 0:
				w = strings.ToUpper(w[:1]) + w[1:]
			case 1:
				w += ","
			case 2:
				w += "."
			case 3:
				b.WriteString(string(rune('0' + r.IntN(10))))
			}
			b.WriteString(w)
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// keywords returns a list of n words of the text's vocabulary (every
// tenth also its capitalised form), as an alternation.
func keywords(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	words := genWords(r, 20000)
	pick := rand.New(rand.NewPCG(3, uint64(n)))
	var out []string
	for _, i := range pick.Perm(len(words))[:n] {
		out = append(out, words[i])
	}
	return strings.Join(out, "|")
}

// settle waits until the files written before it are settled
// (confine.RacyMargin old): moat searches a file written moments ago for
// secrets on every read, where it searches a file of a tree written before
// the session once and remembers what it found (host/confine's findings
// cache). The rows time the second case, a user's tree; what the first
// costs is the redacted view's cost (BENCHMARKS.md). Without the wait the
// rows over files generated at the start (the heavy folder, the 50 MB line)
// timed that search too: 2.4x the heavy folder's settled time.
func settle() {
	fmt.Fprintf(os.Stderr, "moat-bench: waiting %v for the files just written to settle\n", confine.RacyMargin)
	time.Sleep(confine.RacyMargin + 200*time.Millisecond)
}

// writeInputs writes the cliff rows' inputs under dir: text.txt (size
// bytes of genText), long.txt (10 lines of 5 MB, each ending in
// "ENDMARK"), latin1.txt (genText with some letters as Latin-1 bytes).
func writeInputs(dir string, size int) error {
	text := genText(size)
	if err := os.WriteFile(filepath.Join(dir, "text.txt"), text, 0o644); err != nil {
		return err
	}
	var long bytes.Buffer
	for i := 0; i < 10; i++ {
		for long.Len() < (i+1)*5<<20 {
			long.WriteString("the quick brown fox jumps over the lazy dog ")
		}
		long.WriteString("ENDMARK\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "long.txt"), long.Bytes(), 0o644); err != nil {
		return err
	}
	latin := bytes.Clone(text[:min(len(text), 20<<20)])
	for i := 997; i < len(latin); i += 4099 {
		if latin[i] >= 'a' && latin[i] <= 'z' {
			latin[i] = 0xe9 // é in Latin-1: an invalid byte in UTF-8
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "latin1.txt"), latin, 0o644); err != nil {
		return err
	}
	settle()
	return nil
}

// jsonFile is the file of writeJSONLine.
const jsonFile = "bundle.json"

// writeJSONLine writes jsonFile under dir, unless it is there: about 50 MB
// of minified JSON on one line (an array of records, as a bundle or an
// API dump has them), whose last record alone has "last":true.
func writeJSONLine(dir string) error {
	name := filepath.Join(dir, jsonFile)
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(5, 6))
	words := genWords(r, 2000)
	var b bytes.Buffer
	b.Grow(50<<20 + 1024)
	b.WriteByte('[')
	for id := 0; b.Len() < 50<<20; id++ {
		if id > 0 {
			b.WriteByte(',')
		}
		w1, w2 := words[r.IntN(len(words))], words[r.IntN(len(words))]
		fmt.Fprintf(&b, `{"id":%d,"name":"%s %s%d","tags":["%s","%s"],"value":%.6f,"sha":"%016x%016x%08x","ok":%v}`,
			id, strings.ToUpper(w1[:1])+w1[1:], strings.ToUpper(w2[:1])+w2[1:], r.IntN(100000),
			words[r.IntN(len(words))], words[r.IntN(len(words))], r.Float64()*1000, r.Uint64(), r.Uint64(), r.Uint32(), r.IntN(2) == 0)
	}
	b.WriteString(`,{"id":0,"last":true}]`)
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		return err
	}
	settle()
	return nil
}

// heavyDir is the tree of writeHeavyTree.
const heavyDir = "heavy-tree"

// writeHeavyTree writes, under dir unless it is there, a tree one folder
// of which holds half its bytes, as a vendored dependency beside a
// project's own packages: aaa/vendor, 300 files of 128 KB, first in walk
// order, and 300 folders pkg/pNNN of 4 files of 32 KB (76 MB in all).
// Each file holds "#needle#" on its first and last line, so that a grep's
// first 2,000 hits take the folder and a third of the packages; no other
// line has a '#'.
func writeHeavyTree(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return nil
	}
	line := "the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\n"
	write := func(sub string, files, size int) error {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
		data := "a #needle# first\n" + strings.Repeat(line, size/len(line)) + "a #needle# last\n"
		for i := range files {
			if err := os.WriteFile(filepath.Join(dir, sub, fmt.Sprintf("f%03d.txt", i)), []byte(data), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write("aaa/vendor", 300, 128<<10); err != nil {
		return err
	}
	for i := range 300 {
		if err := write(fmt.Sprintf("pkg/p%03d", i), 4, 32<<10); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		return err
	}
	settle()
	return nil
}
