package redact

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

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
