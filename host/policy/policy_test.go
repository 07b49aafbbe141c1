package policy

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestDenied(t *testing.T) {
	p, err := New([]string{"*.sqlite"}, []string{".env.example"})
	if err != nil {
		t.Fatal(err)
	}
	deny := []string{".env", ".ENV", ".env.local", ".env.", ".env ", "a/.env", ".git", ".git/config", "x/.git/hooks/pre-commit",
		"id_rsa", "keys/server.KEY", "cert.pem", ".netrc", ".npmrc", ".pgpass", "db.sqlite", ".ssh/config", ".Env...  ",
		"env", "HISTORY"} // gitrob's "^\.?env$" and "^\.?(bash_|zsh_|sh_|z)?history$" as cited
	allow := []string{".", "environment.md", "notes.txt", ".env.example", "src/.gitignore", "id_rsa.pub", ".github/workflows/ci.yml", "history.md", "hosts.yml", "config.toml", "src/credentials/tls.go", "proj.github/x"}
	for _, d := range deny {
		if _, ok := p.Denied(d); !ok {
			t.Errorf("Denied(%q) = false, want true", d)
		}
	}
	for _, a := range allow {
		if r, ok := p.Denied(a); ok {
			t.Errorf("Denied(%q) = true (rule %q), want false", a, r)
		}
	}
	for _, w := range []string{".vscode/settings.json", ".mcp.json", ".moat.conf", "sub/.vscode/settings.json", ".git/hooks/x", ".envrc",
		".husky/pre-commit", ".pre-commit-config.yaml", ".vscode/mcp.json", "app.code-workspace", ".devcontainer/devcontainer.json", ".devcontainer.json"} {
		if _, ok := p.WriteDenied(w); !ok {
			t.Errorf("WriteDenied(%q) = false", w)
		}
	}
}

func TestClean(t *testing.T) {
	ok := map[string]string{"": ".", ".": ".", "a/./b/": "a/b", "a/../b": "b", "%2e%2e/x": "%2e%2e/x", "a..b": "a..b"}
	for in, want := range ok {
		if got, err := Clean(in); err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]error{"..": ErrEscape, "../x": ErrEscape, "a/../../x": ErrEscape, "../root-evil/x": ErrEscape,
		"/etc/passwd": ErrAbsolute, `C:\x`: ErrAbsolute, `\\server\x`: ErrAbsolute, `..\x`: ErrEscape, "a\x00b": ErrBadChar,
		"~": ErrHome, "~/.bashrc": ErrHome, "file:///etc/passwd": ErrURL,
		// what would leave the root read with Windows separators, mixed too
		`a/../..\x`: ErrEscape, `a\../../x`: ErrEscape, `sub\..\..\outside`: ErrEscape, `x/..\`: ErrEscape,
		// a quoted name is checked as the name it stands for
		`"../x"`: ErrEscape, `"..\x2f..\x2foutside"`: ErrEscape, `"/etc/passwd"`: ErrAbsolute, `"a\x00b"`: ErrBadChar}
	for in, want := range bad {
		if _, err := Clean(in); !errors.Is(err, want) {
			t.Errorf("Clean(%q) err = %v, want %v", in, err, want)
		}
	}
}

// A backslash is a plain character of a name on Unix, and a name the tools
// show quoted (not UTF-8, or a control character) is accepted in that form
// and cleaned as the name it stands for.
func TestCleanNames(t *testing.T) {
	for in, want := range map[string]string{
		`a\b.txt`: `a\b.txt`, `d\x/in.txt`: `d\x/in.txt`, `a\.\b`: `a\.\b`, `x\y`: `x\y`,
		`"bad\xffname.txt"`: "bad\xffname.txt", `"\xfe dir/in.txt"`: "\xfe dir/in.txt", `"a\nb"`: "a\nb",
		`"quoted".txt`: `"quoted".txt`, `"`: `"`, `"unterminated`: `"unterminated`,
	} {
		if got, err := Clean(in); err != nil || got != want {
			t.Errorf("Clean(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	// Errors name the path as the model gave it.
	if _, err := Clean(`"..\x2fsecret"`); err == nil || !strings.Contains(err.Error(), `"..\x2fsecret"`) {
		t.Errorf("error %v does not name the given path", err)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"a", "../a", "a/../../b", "/x", "..\\x", "~/x", "a\x00", `a/../..\x`, `"..\x2f.."`, `a\b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Clean(s)
		if err != nil {
			return
		}
		if c == ".." || len(c) >= 3 && c[:3] == "../" || len(c) > 0 && c[0] == '/' {
			t.Fatalf("Clean(%q) = %q escapes", s, c)
		}
		// Nor does it escape, nor is it absolute, read as Windows reads it.
		if w := path.Clean(strings.ReplaceAll(c, `\`, "/")); w == ".." || strings.HasPrefix(w, "../") || c[0] == '\\' || hasDrive(c) {
			t.Fatalf("Clean(%q) = %q escapes with backslashes as separators", s, c)
		}
	})
}

// FuzzNormalize holds normalize's no-allocation shortcut to the plain
// definition: fold every component.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"a/b", "A/b", "a./b", "a /b", "./..", "...", "a/../b", "É/x", ".env.", "src/.Git/config", "a//b", "a/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts := strings.Split(s, "/")
		for i, c := range parts {
			parts[i] = normalizeName(c)
		}
		if got, want := normalize(s), strings.Join(parts, "/"); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", s, got, want)
		}
	})
}

// TestDeniedGaps is issue 14.4's list: each was readable, each is now
// denied by a family rule, and --allow still opens it deliberately.
func TestDeniedGaps(t *testing.T) {
	gaps := []string{"id_ed25519_sk", ".ssh2/id_ecdsa_sk", "keys/id_ecdsa_sk", ".envrc", "infra/terraform.tfstate",
		"terraform.tfstate.backup", ".cargo/credentials.toml", "home/.cargo/credentials", ".config/gh/hosts.yml",
		".bash_history", "u/.zsh_history", ".python_history", "putty/server.ppk", "proj.git/config", "proj.git/hooks/post-update",
		"deploy_rsa", "prod.tfvars"}
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gaps {
		if _, ok := p.Denied(g); !ok {
			t.Errorf("Denied(%q) = false, want true", g)
		}
	}
	open, err := New(nil, []string{"*.ppk", ".envrc", "*.git", "gh/hosts.yml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"putty/server.ppk", ".envrc", "proj.git/config", ".config/gh/hosts.yml"} {
		if r, ok := open.Denied(g); ok {
			t.Errorf("with --allow, Denied(%q) = true (rule %q)", g, r)
		}
	}
}

// TestDeniedFolding: names a case-insensitive file system takes for a
// denied one are denied: full case folding (U+017F long s, U+212A Kelvin
// sign), NFD as macOS stores names, invisible format characters.
func TestDeniedFolding(t *testing.T) {
	p, err := New([]string{"café.txt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".awſ/credentials", ".ſsh/config", ".AWſ", ".\u212aube/config", "cafe\u0301.txt", "CAFE\u0301.TXT",
		"caf\u00e9.txt", ".e\u200dnv", "\ufeff.env", ".env\u200b", ".ENV\u200e.", "ID_RSA"} {
		if _, ok := p.Denied(d); !ok {
			t.Errorf("Denied(%q) = false, want true", d)
		}
	}
	for _, a := range []string{"notes.txt", "résumé.md", "straße.go"} {
		if r, ok := p.Denied(a); ok {
			t.Errorf("Denied(%q) = true (rule %q), want false", a, r)
		}
	}
}

// TestDeniedASCIIFastPath: the check made for every open allocates
// nothing for an already-folded ASCII path.
func TestDeniedASCIIFastPath(t *testing.T) {
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { p.Denied("src/internal/policy/policy_test.go") }); n != 0 {
		t.Errorf("Denied allocates %.0f times for a folded ASCII path", n)
	}
}

// TestRunsCode: issue 14.5's files and the wider class are marked with
// their tool; ordinary files are not; the never-written part of the class
// is refused by WriteDenied as well.
func TestRunsCode(t *testing.T) {
	want := map[string]string{
		".husky/pre-commit": "git (husky hooks)", ".pre-commit-config.yaml": "git (pre-commit hooks)",
		".vscode/mcp.json": "VS Code", "team.code-workspace": "VS Code", ".devcontainer/devcontainer.json": "Dev Containers",
		"sub/.VSCode/Tasks.json": "VS Code", "Makefile": "make", "web/package.json": "npm", ".github/workflows/ci.yml": "GitHub Actions",
		"crate/build.rs": "cargo", ".envrc": "direnv", "tests/conftest.py": "pytest", ".git/hooks/pre-push": "git",
		"AGENTS.md": "moat (--agents-md) and other agents",
	}
	for path, tool := range want {
		if got, ok := RunsCode(path); !ok || got != tool {
			t.Errorf("RunsCode(%q) = %q, %v; want %q", path, got, ok, tool)
		}
	}
	for _, path := range []string{"main.go", "README.md", "docs/Makefile.md", ".github/CODEOWNERS", "../Makefile", "/etc/x"} {
		if got, ok := RunsCode(path); ok {
			t.Errorf("RunsCode(%q) = %q, want not marked", path, got)
		}
	}
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{".husky/pre-commit", ".pre-commit-config.yaml", ".vscode/mcp.json", "team.code-workspace", ".devcontainer/Dockerfile"} {
		if _, ok := p.WriteDenied(path); !ok {
			t.Errorf("WriteDenied(%q) = false: it runs code without the user deciding to run anything", path)
		}
	}
}

// TestWithin is issue 15.8: absolute paths inside the root map to the
// relative path, also through the root's symlink-resolved form; others are
// refused naming the root, never a guessed path.
func TestWithin(t *testing.T) {
	roots := []string{"/home/me/proj", "/data/proj"}
	ok := map[string]string{"/home/me/proj/x": "x", "/home/me/proj": ".", "/home/me/proj/": ".", "/home/me/proj/a/../b/./c": "b/c",
		"/data/proj/src/main.go": "src/main.go", "rel/x": "rel/x", "": "", "//home/me/proj/x": "x"}
	for in, want := range ok {
		if got, err := Within(in, roots...); err != nil || got != want {
			t.Errorf("Within(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"/home/me/proj2/x", "/home/me/proj/../other/x", "/etc/passwd", "/", "/home/me"} {
		_, err := Within(in, roots...)
		if !errors.Is(err, ErrAbsolute) || !strings.Contains(err.Error(), "root is /home/me/proj;") || strings.Contains(err.Error(), `"`) {
			t.Errorf("Within(%q) err = %v; want ErrAbsolute naming the root and no suggested path", in, err)
		}
	}
	if got, err := Within("/x/y", "/"); err != nil || got != "x/y" {
		t.Errorf("Within with root / = %q, %v", got, err)
	}
	if _, err := Clean("/home/me/proj/x"); err == nil || strings.Contains(err.Error(), "home/me/proj/x\"") {
		t.Errorf("Clean suggests a path that need not exist: %v", err)
	}
}

// BenchmarkDenied is the per-open cost: a folded ASCII path (nearly every
// path), one with upper case, and one that needs Unicode folding.
func BenchmarkDenied(b *testing.B) {
	p, err := New(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{
		{"ascii", "src/internal/policy/policy_test.go"},
		{"upper", "src/Internal/Policy/README.md"},
		{"unicode", "docs/résumé/Ünïcode/naïve.md"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Denied(c.path)
			}
		})
	}
}

// TestRuleIndexAgreesWithDoublestar holds the indexed rule kinds (exact,
// extension, prefix, suffix, affix, infix, literal path) to the plain
// definition: doublestar on each component, or on each path prefix for a
// rule with "/".
func TestRuleIndexAgreesWithDoublestar(t *testing.T) {
	pats := append(append([]string{"a*b*c", "*.tfstate.*", "x?z", "docs/**/*.md"}, defaultDeny...), neverWritten()...)
	var names []string
	for _, p := range pats {
		n := normalize(p)
		for _, r := range []string{"", "x", "x.y", "_sk"} {
			names = append(names, strings.ReplaceAll(n, "*", r), "d/"+strings.ReplaceAll(n, "*", r)+"/f", strings.ReplaceAll(n, "*", r)+".bak")
		}
	}
	names = append(names, "terraform.tfstate", "a.tfstate.1", "abxc", "axbyc", "docs/a/b.md", "proj.git", ".git", "main.go", "x.pem.txt")
	for _, p := range pats {
		var rs ruleSet
		if err := rs.add(p); err != nil {
			t.Fatal(err)
		}
		n := normalize(p)
		pol := &Policy{}
		for _, name := range names {
			_, got := pol.walk(name, &rs)
			want := false
			parts := strings.Split(normalize(name), "/")
			for i := range parts {
				upTo := strings.Join(parts[:i+1], "/")
				if strings.Contains(n, "/") {
					a, _ := doublestar.Match(n, upTo)
					b, _ := doublestar.Match("**/"+n, upTo)
					want = want || a || b
				} else if ok, _ := doublestar.Match(n, parts[i]); ok {
					want = true
				}
			}
			if got != want {
				t.Errorf("rule %q on %q: indexed %v, doublestar %v", p, name, got, want)
			}
		}
	}
}

// Protect names moat's own files by absolute path; Protected finds a path
// that is one or lies under one, through a link to a folder above it, and
// in another case; a sibling with the same prefix is not under it.
func TestProtected(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, ".config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "home")); err != nil {
		t.Fatal(err)
	}
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Protect(filepath.Join(dir, "home", ".config", "moat"), "relative/ignored", "")
	for path, want := range map[string]bool{
		filepath.Join(dir, "home", ".config", "moat"):                    true,
		filepath.Join(dir, "home", ".config", "moat", "config"):          true,
		filepath.Join(real, ".config", "moat", "config"):                 true, // the link resolved
		filepath.Join(dir, "home", ".CONFIG", "Moat", "config"):          true,
		filepath.Join(dir, "home", ".config", "moat2"):                   false,
		filepath.Join(dir, "home", ".config"):                            false,
		filepath.Join(dir, "home", ".config", "other", "moat", "config"): false,
	} {
		if _, got := p.Protected(path); got != want {
			t.Errorf("Protected(%s) = %v, want %v", path, got, want)
		}
	}
}

// NotPlain: each structural reason, and plain files that only look a
// little like them.
func TestNotPlain(t *testing.T) {
	for rel, mode := range map[string]fs.FileMode{
		".x": 0, "a/.cfg/b.txt": 0, "bin/tool": 0o755, "run.sh": 0, "x/Makefile.am": 0, "Dockerfile.dev": 0,
		"requirements-dev.txt": 0, "Pipfile": 0, "deploy.yml": 0, "a.json": 0, "foorc": 0, "BUILD": 0, "x.bzl": 0,
	} {
		if _, ok := NotPlain(rel, mode, nil, []byte("x\n")); !ok {
			t.Errorf("NotPlain(%q) = plain", rel)
		}
	}
	if _, ok := NotPlain("tools/gen", 0, nil, []byte("#!/bin/sh\n")); !ok {
		t.Error("a new #! file is plain")
	}
	if _, ok := NotPlain("tools/gen", 0, []byte("#!/bin/sh\n"), []byte("x\n")); !ok {
		t.Error("replacing a #! file is plain")
	}
	for _, rel := range []string{"main.go", "go.mod", "README.md", "docs/Makefile.md", "Dockerfile.txt", "src/lib.rs", "data.csv", "notes.txt", "src"} {
		if why, ok := NotPlain(rel, 0o644, []byte("x"), []byte("y")); ok {
			t.Errorf("NotPlain(%q) = %q, want plain", rel, why)
		}
	}
}
