package main

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The docs name only what exists. Every *.md file of the repository is read
// for the things a reader would go and look for: tests, fuzz targets and
// benchmarks (TestXxx), identifiers of moat's packages (`confine.FS`,
// `proto.ReadWhole`), paths in the repository (`host/confine/readfiles.go`)
// moat's flags (`--record-files`, and every flag of a `moat ...` command
// line), and the targets of relative links (a file, and a heading in it). Each must exist in the code; a doc that names a test that
// was renamed, or a flag that is gone, fails here.
func TestDocsNameWhatExists(t *testing.T) {
	top := filepath.Join("..", "..")
	docs, gofiles := repoFiles(t, top)
	decls := declared(t, top, gofiles)
	flags := moatFlags()

	testName := regexp.MustCompile(`\b(Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*`)
	span := regexp.MustCompile("`([^`\n]+)`")
	qualified := regexp.MustCompile(`^\(?\*?([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)
	flagWord := regexp.MustCompile(`(?:^|\s)(--[a-z][a-z0-9-]*)`)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)

	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(top, doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, name := range unique(testName.FindAllString(text, -1)) {
			if !decls.funcs[name] && !strings.Contains(text, "func "+name+"(") {
				t.Errorf("%s names %s, which is no function of the repository", doc, name)
			}
		}
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(m[1], "mailto:") {
				continue
			}
			file := path.Join(path.Dir(doc), target)
			if target == "" {
				file = doc
			}
			body, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(file)))
			if err != nil {
				t.Errorf("%s links to %s, which the repository does not have", doc, m[1])
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !anchors(string(body))[anchor] {
				t.Errorf("%s links to %s, whose file has no heading for #%s", doc, m[1], anchor)
			}
		}
		var spans []string
		for _, m := range span.FindAllStringSubmatch(text, -1) {
			spans = append(spans, m[1])
		}
		inBlock := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			if inBlock {
				spans = append(spans, strings.TrimSpace(line))
			}
		}
		for _, s := range unique(spans) {
			if m := qualified.FindStringSubmatch(s); m != nil && decls.pkgs[m[1]] != nil {
				if !decls.pkgs[m[1]][m[2]] || (m[3] != "" && !decls.pkgs[m[1]][m[3]]) {
					t.Errorf("%s names `%s`, which package %s does not declare", doc, strings.TrimSuffix(m[0], "("), m[1])
				}
			}
			if p, ok := repoPath(s); ok {
				if _, err := os.Stat(filepath.Join(top, filepath.FromSlash(p))); err != nil {
					t.Errorf("%s names the path %s, which the repository does not have", doc, p)
				}
			}
			// A flag alone in a span, or any flag of a moat command line.
			if strings.HasPrefix(s, "--") || strings.HasPrefix(s, "moat ") {
				words := s
				if !strings.HasPrefix(s, "moat ") {
					words, _, _ = strings.Cut(s, " ")
					words, _, _ = strings.Cut(words, "=")
				}
				for _, m := range flagWord.FindAllStringSubmatch(words, -1) {
					if f := m[1][2:]; !flags[f] && !foreignFlags[f] {
						t.Errorf("%s names the flag --%s, which no moat command has", doc, f)
					}
				}
			}
		}
	}
}

// anchors are the link targets a markdown file's headings make, as GitHub
// makes them: lower case, spaces to dashes, punctuation but dashes and
// underscores dropped.
func anchors(md string) map[string]bool {
	a := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a[b.String()] = true
	}
	return a
}

// ARCHITECTURE.md's list of packages names every package of the module:
// a package added without a line there is a package no newcomer finds.
func TestArchitectureListsEveryPackage(t *testing.T) {
	top := filepath.Join("..", "..")
	arch, err := os.ReadFile(filepath.Join(top, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(arch), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(line, " ") {
			listed[strings.TrimSuffix(f[0], "/")] = true
		}
	}
	_, gofiles := repoFiles(t, top)
	seen := map[string]bool{}
	for _, f := range gofiles {
		dir := path.Dir(f)
		if strings.HasSuffix(f, "_test.go") || seen[dir] || dir == "." || strings.HasPrefix(dir, "conformance") {
			continue // conformance/ is a module of its own, listed as one
		}
		seen[dir] = true
		if !listed[dir] {
			t.Errorf("ARCHITECTURE.md's list of packages has no line for %s", dir)
		}
	}
}

// foreignFlags are flags the docs name that belong to other programs (git's
// options a config rule refuses, llama.cpp's server's), never to moat's
// commands. A test a doc writes out itself (`func TestRecordings(` in the
// moattest recipe) is the reader's, not the repository's.
var foreignFlags = map[string]bool{
	"config-env": true, "exec-path": true, // git options a git alias may not pass
	"git-dir": true, "work-tree": true, "namespace": true, "upload-pack": true, "receive-pack": true,
	"no-verify": true, "browser": true, "exec": true, "extcmd": true, "httpd": true,
	"open-files-in-pager": true, "super-prefix": true,
	"experimental-loader": true, "import": true, "loader": true, "require": true, // node's preloads
	"jinja": true, "reasoning": true, "reasoning-format": true, // llama.cpp's server
	"dotfiles": true, // GNU stow
	"add-host": true, // docker run, in the Open WebUI recipe
}

// repoFiles lists the repository's *.md and *.go files (relative, with
// slashes), leaving out what is not the project's own: .git, testdata,
// vendored or installed trees.
func repoFiles(t *testing.T, top string) (docs, gofiles []string) {
	t.Helper()
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "vendor", "node_modules", ".bin":
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(rel, ".md"):
			docs = append(docs, rel)
		case strings.HasSuffix(rel, ".go"):
			gofiles = append(gofiles, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 4 {
		t.Fatalf("found %d docs under %s: not the repository's top", len(docs), top)
	}
	return docs, gofiles
}

// decls holds what the Go files declare: every function and method name,
// and for each package name every identifier it declares (functions,
// methods, types, variables, constants, struct fields and interface
// methods), from its files and its tests'.
type decls struct {
	funcs map[string]bool
	pkgs  map[string]map[string]bool
}

func declared(t *testing.T, top string, gofiles []string) decls {
	t.Helper()
	d := decls{funcs: map[string]bool{}, pkgs: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	for _, f := range gofiles {
		file, err := parser.ParseFile(fset, filepath.Join(top, f), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		pkg := file.Name.Name
		if pkg == "main" {
			pkg = filepath.Base(filepath.Dir(f))
		}
		pkg = strings.TrimSuffix(pkg, "_test")
		names := d.pkgs[pkg]
		if names == nil {
			names = map[string]bool{}
			d.pkgs[pkg] = names
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				d.funcs[n.Name.Name] = true
				names[n.Name.Name] = true
			case *ast.TypeSpec:
				names[n.Name.Name] = true
			case *ast.ValueSpec:
				for _, id := range n.Names {
					names[id.Name] = true
				}
			case *ast.Field:
				for _, id := range n.Names {
					names[id.Name] = true
				}
			}
			return true
		})
	}
	return d
}

// repoPath reports whether a code span is a path in the repository: it
// starts with one of the repository's top folders and holds nothing but a
// path (no spaces, patterns or placeholders). A trailing slash or a
// ":line" is dropped.
func repoPath(s string) (string, bool) {
	if strings.ContainsAny(s, " *?[]{}<>$~\"'") || strings.Contains(s, "...") {
		return "", false
	}
	s = strings.TrimSuffix(s, "/")
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	for _, top := range []string{"cmd/", "host/", "guest/", "isolate/", "moattest/", "testscripts/", "docs/", ".ci/"} {
		if strings.HasPrefix(s, top) {
			return s, true
		}
	}
	switch s {
	case "ARCHITECTURE.md", "SECURITY.md", "BENCHMARKS.md", "README.md", "Makefile", "go.mod":
		return s, true
	}
	return "", false
}

// moatFlags is every flag name of every moat command.
func moatFlags() map[string]bool {
	e := &env{stdin: strings.NewReader(""), stdout: new(strings.Builder), stderr: new(strings.Builder), getenv: func(string) string { return "" }}
	root := rootCommand(e)
	names := map[string]bool{"help": true}
	root.FlagSet.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	for _, c := range root.Subcommands {
		if c.FlagSet != nil {
			c.FlagSet.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
		}
	}
	return names
}

func unique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
