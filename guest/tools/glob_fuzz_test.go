package tools

import (
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/moatdev/moat/guest/proto"
)

// FuzzGlobPattern: any pattern and start folder give an answer, never an
// internal error; an invalid pattern is named as such; and every path glob
// lists exists, lies under the start folder, matches the pattern, is
// neither inside .git nor behind a symlink nor .gitignored, and the list
// respects the cap.
func FuzzGlobPattern(f *testing.F) {
	for _, s := range [][2]string{
		{"**", ""}, {"**/*.go", "."}, {"*", "src"}, {"[", ""}, {"{a,b", ""}, {"**/", ""},
		{"../**", ""}, {"/etc/*", ""}, {"src/**/z*", ""}, {"\\", ""}, {"**/.git/**", ""},
		{"l/**", ""}, {"{**/x,*}", "src"}, {"[!a]*", ""}, {"*", "../x"}, {"**", "l"},
	} {
		f.Add(s[0], s[1])
	}
	fsys := fstest.MapFS{
		".gitignore":        file("build/\n*.log\n"),
		"a.go":              file("package a\n"),
		"b.log":             file("ignored\n"),
		"build/gen.go":      file("ignored\n"),
		".git/config":       file("never listed\n"),
		"src/x.go":          file("x\n"),
		"src/deep/z.ts":     file("z\n"),
		"src/deep/zz/y.go":  file("y\n"),
		"src/.gitignore":    file("deep/zz/\n"),
		"l":                 link("src"),
		"weird[name]{x}.md": file("w\n"),
	}
	const limit = 4
	f.Fuzz(func(t *testing.T, pattern, start string) {
		resp := call(t, fsys, proto.Glob, map[string]any{"pattern": pattern, "path": start}, proto.Limits{MaxResults: limit})
		text := resp.Text
		if strings.Contains(text, "internal error") {
			t.Fatalf("pattern %q path %q: %s", pattern, start, text)
		}
		if !doublestar.ValidatePattern(pattern) {
			if !resp.IsError || !strings.HasPrefix(text, "error: invalid glob pattern: ") {
				t.Fatalf("invalid pattern %q: %q", pattern, text)
			}
			return
		}
		if resp.IsError || strings.HasPrefix(text, "no files match ") {
			return
		}
		base, err := cleanPath(start)
		if err != nil {
			t.Fatalf("path %q refused by cleanPath but glob answered %q", start, text)
		}
		listed := 0
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "... ") && strings.HasSuffix(line, " more matches") {
				continue
			}
			listed++
			p := strings.TrimSuffix(line, "/")
			fi, err := fs.Lstat(fsys, p)
			if err != nil {
				t.Fatalf("pattern %q: listed %q, which does not exist", pattern, line)
			}
			if fi.IsDir() != strings.HasSuffix(line, "/") {
				t.Fatalf("pattern %q: %q is listed with the wrong folder mark", pattern, line)
			}
			rel := p
			if base != "." {
				if !strings.HasPrefix(p, base+"/") {
					t.Fatalf("pattern %q under %q: listed %q outside the start folder", pattern, base, line)
				}
				rel = p[len(base)+1:]
			}
			if !globMatches(pattern, rel, fi.IsDir()) {
				t.Fatalf("pattern %q: listed %q, which does not match", pattern, line)
			}
			// A start folder that is a link inside the root is followed (the
			// host confines it); links met during the walk are not.
			for _, bad := range []string{".git", "l", "build", "src/deep/zz"} {
				if p != bad && strings.HasPrefix(p, bad+"/") && !strings.HasPrefix(base+"/", bad+"/") {
					t.Fatalf("pattern %q: listed %q, inside %s", pattern, line, bad)
				}
			}
			if path.Ext(p) == ".log" || p == ".git" {
				t.Fatalf("pattern %q: listed ignored or hidden %q", pattern, line)
			}
		}
		if listed > limit {
			t.Fatalf("pattern %q: %d paths listed, cap %d", pattern, listed, limit)
		}
	})
}

// FuzzGlobFileFilter: the name filter only ever rules out files the
// pattern cannot match: whatever folder a name is in, a name it passes
// over never matches.
func FuzzGlobFileFilter(f *testing.F) {
	for _, s := range [][3]string{
		{"**/f0*.go", "src/a", "f0.go"}, {"**/f0*.go", "", "f1.go"}, {"*.go", "", "x.go"},
		{"a[/]b.go", "a", "b.go"}, {"**/x?", "d", "xy"}, {"**/ab*ba", "", "aba"},
		{"**/é*", "", "\xff"}, {"**/*\uFFFD", "", "a\xff"}, {"src/main.go", "src", "main.go"},
		{"**/[ab]c", "", "ac"}, {"**/a]b", "", "a]b"}, {"**/*.go/**", "x.go", "y"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pattern, dir, name string) {
		if checkGlob(pattern) != nil || name == "" || strings.Contains(name, "/") {
			return
		}
		skip := globFileFilter(globPattern(pattern))
		if skip == nil || !skip(name) {
			return
		}
		p := name
		if dir != "" {
			p = dir + "/" + name
		}
		if matchGlob(pattern, p) {
			t.Fatalf("pattern %q: the filter passed over %q, which matches", pattern, p)
		}
	})
}

// TestGlobFileFilter: what the filter knows for common patterns.
func TestGlobFileFilter(t *testing.T) {
	for _, c := range []struct {
		pattern string
		skip    []string
		keep    []string
	}{
		{"**/f0*.go", []string{"f1.go", "f0.ts", "e000001"}, []string{"f0.go", "f00.go"}},
		{"**/*.go", []string{"a.ts", "go"}, []string{"a.go", ".go"}},
		{"src/main.go", []string{"main.gox", "amain.go"}, []string{"main.go"}},
		{"**/[ab]c.txt", []string{"ac.md"}, []string{"ac.txt", "zc.txt"}},
	} {
		skip := globFileFilter(globPattern(c.pattern))
		for _, n := range c.skip {
			if skip == nil || !skip(n) {
				t.Errorf("%s: %q not passed over", c.pattern, n)
			}
		}
		for _, n := range c.keep {
			if skip != nil && skip(n) {
				t.Errorf("%s: %q passed over", c.pattern, n)
			}
		}
	}
	for _, p := range []string{"**", "*", "**/*", "{a,b}.go", `**/\*.go`, "src/", "x/**"} {
		if globFileFilter(globPattern(p)) != nil {
			t.Errorf("%s: a filter where nothing is known for certain", p)
		}
	}
}
