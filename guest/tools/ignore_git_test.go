package tools

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/moatdev/moat/guest/proto"
)

// gitFiles is what `git ls-files -co --exclude-standard` lists in dir (a
// fresh repository, so only untracked, not ignored files), with the user's
// and the system's git configuration (global excludes) kept out.
func gitFiles(t *testing.T, git, dir string) []string {
	t.Helper()
	run := func(args ...string) []byte {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return out
	}
	run("init", "-q")
	out := run("-c", "core.excludesFile=", "-c", "core.quotePath=false", "ls-files", "-z", "-co", "--exclude-standard")
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	slices.Sort(files)
	return files
}

// globFiles is the files (not folders) glob "**" lists in dir.
func globFiles(t *testing.T, dir string) []string {
	t.Helper()
	resp := call(t, os.DirFS(dir), proto.Glob, map[string]any{"pattern": "**"}, proto.Limits{MaxResults: 1 << 20})
	if resp.IsError {
		t.Fatalf("glob: %s", resp.Text)
	}
	var files []string
	for _, line := range strings.Split(resp.Text, "\n") {
		if line == "" || strings.HasSuffix(line, "/") || strings.HasPrefix(line, "no files match") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.Contains(line, " ") {
			t.Fatalf("glob noted: %s", line)
		}
		if needsQuote(strings.Trim(line, `"`)) || strings.HasPrefix(line, `"`) {
			if u, err := strconv.Unquote(line); err == nil {
				line = u
			}
		}
		files = append(files, line)
	}
	slices.Sort(files)
	return files
}

// Hand-written cases from gitignore(5) and issue 13, each checked against
// git as well as against the expected list.
var ignoreCases = []struct {
	name  string
	files map[string]string
	want  []string // files listed; nil: only compare with git
}{
	{"negation re-includes", map[string]string{
		".gitignore": "out/*\n!out/keep.txt\n", "out/keep.txt": "", "out/drop.txt": ""},
		[]string{".gitignore", "out/keep.txt"}},
	{"middle slash anchors", map[string]string{
		".gitignore": "docs/x.txt\n", "docs/x.txt": "", "sub/docs/x.txt": ""},
		[]string{".gitignore", "sub/docs/x.txt"}},
	{"child undoes parent", map[string]string{
		".gitignore": "*.log\n", "a/.gitignore": "!important.log\n", "a/important.log": "", "a/other.log": "", "b.log": ""},
		[]string{".gitignore", "a/.gitignore", "a/important.log"}},
	{"folder only", map[string]string{
		".gitignore": "foo/\n", "foo/a": "", "bar/foo": ""},
		[]string{".gitignore", "bar/foo"}},
	{"no re-include below an excluded folder", map[string]string{
		".gitignore": "build/\n!build/keep\n", "build/keep": "", "x": ""},
		[]string{".gitignore", "x"}},
	{"double star forms", map[string]string{
		".gitignore": "**/logs\na/**/z\nq/**\n", "logs/1": "", "s/logs/2": "", "a/z": "", "a/b/c/z": "", "q/r": "", "q2": ""},
		[]string{".gitignore", "q2"}},
	{"escapes and trailing spaces", map[string]string{
		".gitignore": "\\#hash\n\\!bang\nsp   \nkeep\\ \n#comment\n", "#hash": "", "!bang": "", "sp": "", "keep ": "", "#comment": ""},
		[]string{"#comment", ".gitignore"}},
	{"brackets", map[string]string{
		".gitignore": "[!a]*.c\n[[:digit:]]x\n", "a.c": "", "b.c": "", "1x": "", "ax": ""},
		[]string{".gitignore", "a.c", "ax"}},
	{"star does not cross slashes", map[string]string{
		".gitignore": "a/*.c\n", "a/x.c": "", "a/b/x.c": ""},
		[]string{".gitignore", "a/b/x.c"}},
}

func TestIgnoreCases(t *testing.T) {
	git, gitWhy := command("git", "the comparison with git")
	for _, c := range ignoreCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := globFiles(t, dir)
			if c.want != nil && !slices.Equal(got, c.want) {
				t.Errorf("glob lists %q, want %q", got, c.want)
			}
			if gitWhy != "" {
				t.Skip(gitWhy + "; only the expected lists were checked")
			}
			if want := gitFiles(t, git, dir); !slices.Equal(got, want) {
				t.Errorf("glob lists %q, git %q", got, want)
			}
		})
	}
}

// TestIgnoreAgainstGit builds random trees with random nested .gitignore
// files (negations, anchors, folder rules, "**", brackets, escapes,
// trailing spaces) and checks that glob lists exactly the files git lists.
// MOAT_IGNORE_TREES sets how many trees (default 150).
func TestIgnoreAgainstGit(t *testing.T) {
	git, why := command("git", "the comparison of the ignore rules with git")
	if why != "" {
		t.Skip(why)
	}
	n := 150
	if testing.Short() {
		n = 30
	}
	if s := os.Getenv("MOAT_IGNORE_TREES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		dir := t.TempDir()
		files, ignores := randomTree(rng)
		for name, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if target, ok := strings.CutPrefix(body, "-> "); ok {
				// git lists a symlink as a file, even one to a folder;
				// glob lists it and does not follow it.
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, want := globFiles(t, dir), gitFiles(t, git, dir)
		if !slices.Equal(got, want) {
			var b strings.Builder
			for _, g := range ignores {
				fmt.Fprintf(&b, "--- %s\n%s", g, files[g])
			}
			t.Fatalf("seed %d: glob and git disagree\nonly glob: %q\nonly git: %q\nall files: %q\n%s",
				seed, minus(got, want), minus(want, got), slices.Sorted(maps.Keys(files)), b.String())
		}
	}
}

// minus is what a has and b has not, for a short failure message.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

var (
	treeDirs  = []string{"a", "b", "out", "docs", "sub", "foo", "test1", "build"}
	treeFiles = []string{"x.txt", "keep.txt", "important.log", "debug.log", "c.go", "test2.go", "#x", "!y", "t ", "foo", "a1", "[ab]"}
)

// randomTree returns file contents by path (.gitignore files among them)
// and the paths of the .gitignore files.
func randomTree(rng *rand.Rand) (map[string]string, []string) {
	files := map[string]string{}
	dirs := map[string]bool{"": true}
	for range 10 + rng.IntN(25) {
		depth := rng.IntN(4)
		p := ""
		for range depth {
			p += treeDirs[rng.IntN(len(treeDirs))] + "/"
		}
		name := p + treeFiles[rng.IntN(len(treeFiles))]
		// A path cannot be both a file and a folder.
		if dirs[name] || conflicts(files, p) {
			continue
		}
		files[name] = ""
		if rng.IntN(8) == 0 {
			files[name] = "-> " + []string{".", "..", "x.txt", "nowhere"}[rng.IntN(4)]
		}
		for d := p; d != ""; d = d[:strings.LastIndexByte(strings.TrimSuffix(d, "/"), '/')+1] {
			dirs[strings.TrimSuffix(d, "/")] = true
		}
	}
	var ignores []string
	for d := range dirs {
		if d != "" && rng.IntN(3) != 0 {
			continue
		}
		name := ".gitignore"
		if d != "" {
			name = d + "/.gitignore"
		}
		if _, ok := files[name]; ok || dirs[name] {
			continue
		}
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(randomRule(rng, files, d))
			b.WriteByte('\n')
		}
		files[name] = b.String()
		ignores = append(ignores, name)
	}
	slices.Sort(ignores)
	return files, ignores
}

// conflicts reports whether a folder of p is already a file.
func conflicts(files map[string]string, p string) bool {
	for d := strings.TrimSuffix(p, "/"); d != ""; {
		if _, ok := files[d]; ok {
			return true
		}
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			break
		}
		d = d[:i]
	}
	return false
}

var ruleShapes = []string{
	"*.log", "*.txt", "*", "?.go", "[ab]", "[!a]*", "te*", "**/docs", "docs/**", "a/**/x.txt",
	"**/x.txt", "out/*", "docs/x.txt", "sub/docs", `\#x`, `\!y`, "*/", `t\ `, "keep.txt   ",
	"[[:alpha:]]1", "**", "a/**", "*/*.txt", "**/*.log", "test*/", "b/*/c.go", "#x", "foo",
	"[a-c]*", `\[ab]`, "***", "a**b", "x.txt/", "/*.go", "**/b/**", "**/x.txt", "a*/**/c.go",
	"**/b/*.txt", "*/**", "**/*/", "**/[ab]*/**/*[go]", "te?t*/**/*.go", "*.l[!o]g", "[[:digit:]]*",
}

// randomRule is a rule for a .gitignore in folder dir: a fixed shape, or a
// path from the tree below dir with parts turned into wildcards; with a
// random "!", leading "/" and trailing "/".
func randomRule(rng *rand.Rand, files map[string]string, dir string) string {
	var r string
	if rng.IntN(2) == 0 {
		r = ruleShapes[rng.IntN(len(ruleShapes))]
	} else {
		var below []string
		for f := range files {
			if dir == "" || strings.HasPrefix(f, dir+"/") {
				below = append(below, strings.TrimPrefix(f, dir+"/"))
			}
		}
		slices.Sort(below)
		if len(below) == 0 {
			return "*"
		}
		parts := strings.Split(below[rng.IntN(len(below))], "/")
		parts = parts[:1+rng.IntN(len(parts))] // the path of a file or of a folder above it
		for i := range parts {
			switch rng.IntN(6) {
			case 0:
				parts[i] = "*"
			case 1:
				parts[i] = "**"
			case 2:
				parts[i] = parts[i][:len(parts[i])/2] + "*"
			}
		}
		r = strings.Join(parts, "/")
	}
	if rng.IntN(4) == 0 {
		r = "!" + r
	}
	if rng.IntN(6) == 0 {
		r = "/" + strings.TrimPrefix(r, "!")
	}
	if rng.IntN(6) == 0 {
		r += "/"
	}
	return r
}

// BenchmarkIgnored: one path checked against a .gitignore of the size and
// shape of GitHub's Node.gitignore template (about a hundred rules).
func BenchmarkIgnored(b *testing.B) {
	var rules strings.Builder
	for i := range 25 {
		n := strconv.Itoa(i)
		rules.WriteString("*.log" + n + "\nlogs" + n + "/\n/build" + n + "/**\n**/cache" + n + "/*.tmp\n")
	}
	fsys := fstestMap(map[string]string{".gitignore": rules.String()})
	ig := newIgnorer(fsys, "src", nil)
	ig.enter(".", true)
	paths := []string{"src/main.go", "src/lib/util/strings_test.go", "docs/readme.md", "a/b/c/d/e/f.txt"}
	b.ResetTimer()
	for i := range b.N {
		ig.ignored(paths[i%len(paths)], false)
	}
}

func fstestMap(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, body := range files {
		m[name] = file(body)
	}
	return m
}
