package redact

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sample is about n bytes of this repository's Go source, the kind of
// text read_file and grep answer with.
func sample(n int) string {
	var s strings.Builder
	filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil || s.Len() >= n || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_gen.go") {
			return nil
		}
		data, _ := os.ReadFile(p)
		for i, l := range strings.Split(string(data), "\n") {
			if s.Len() >= n {
				break
			}
			s.WriteString(p + ":" + string(rune('0'+i%10)) + ":" + l + "\n")
		}
		return nil
	})
	return s.String()
}

func BenchmarkRedact(b *testing.B) {
	r := New()
	for _, n := range []int{4 << 10, 128 << 10} {
		text := sample(n)
		r.Redact(text) // compile what it needs once
		b.Run(fmt.Sprintf("size=%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.Redact(text)
			}
		})
	}
}

// BenchmarkFindTree finds in every file of GOROOT/src, as the redacted
// view does the first time a session's grep reads the tree.
func BenchmarkFindTree(b *testing.B) {
	var files [][]byte
	var names []string
	filepath.WalkDir(filepath.Join(runtime.GOROOT(), "src"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			files, names = append(files, data), append(names, p)
		}
		return nil
	})
	r := New()
	n := 0
	for _, f := range files {
		n += len(f)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		for i, f := range files {
			r.FindFile(names[i], f)
		}
	}
}
