package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
)

// BenchmarkGeneratedTree runs the scale rows' calls (the guest's tool code,
// natively) on a small generated tree, so that `make bench-once` keeps the
// generator and the calls working; `moat-bench -rows 'generated tree'` measures them
// at full size beside grep, rg and ls.
func BenchmarkGeneratedTree(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "tree")
	files, wide, err := genTree(dir, 0.02)
	if err != nil {
		b.Fatal(err)
	}
	fsys := os.DirFS(dir)
	for _, c := range []struct {
		name, tool, args, want string
	}{
		{"grep", proto.Grep, `{"pattern":"zzqqxx_nohit","output_mode":"count"}`, "no matches"},
		{"glob", proto.Glob, `{"pattern":"**/f0*.go"}`, "src/pkg000/mod0/f0.go"},
		{"list_dir", proto.ListDir, `{"path":"wide"}`, fmt.Sprintf("... %d more entries", wide-1000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				resp := tools.Run(fsys, proto.Request{ID: 1, Tool: c.tool, Args: []byte(c.args)})
				if resp.IsError || !strings.Contains(resp.Text, c.want) {
					b.Fatalf("%s on %d files: %q", c.tool, files, resp.Text)
				}
			}
		})
	}
}
