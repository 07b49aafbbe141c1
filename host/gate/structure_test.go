package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Writes are judged by structure: a file no row names reaches the prompt
// with a warning saying why it is not plain data (a dotfile, a file in a
// dot-folder, an executable kept, a shebang, a build manifest or config
// by its name, a build script a manifest names); a plain file has none;
// a folder the root's git config names as hooks, and the files the
// package managers' configs name to run, are refused before anyone is
// asked.
func TestWritesJudgedByStructure(t *testing.T) {
	warned := map[string]string{
		".pdbrc2":            "dotfile",
		"conf/.settings/x":   "dot-folder .settings",
		"tools/run":          "executable",
		"tools/gen":          "#!",
		"scripts/deploy.sh":  "script",
		"BUILD":              "build manifest",
		"ci/deploy.yaml":     "configuration file (.yaml)",
		"app/foorc":          "rc file",
		"gen/codegen.rs":     "cargo (build in Cargo.toml) names this file",
		"scripts/setup.js":   "npm (the postinstall script in package.json) names this file",
		"tools/release.bash": "script",
	}
	for rel, want := range warned {
		t.Run(rel, func(t *testing.T) {
			f := newFixture(t, "n\n")
			f.write("Cargo.toml", "[package]\nname = \"x\"\nbuild = \"gen/codegen.rs\"\n")
			f.write("package.json", `{"scripts":{"postinstall":"node scripts/setup.js && echo ok"}}`)
			content := "x\n"
			switch rel {
			case "tools/run":
				f.write(rel, "old\n")
				if err := os.Chmod(filepath.Join(f.root, rel), 0o755); err != nil {
					t.Fatal(err)
				}
			case "tools/gen":
				content = "#!/bin/sh\ntouch pwned\n"
			}
			f.propose("propose_write", write(rel, content))
			screen := f.tty.String()
			if !strings.Contains(screen, "WARNING: ") || !strings.Contains(screen, want) {
				t.Errorf("no warning naming %q:\n%s", want, screen)
			}
		})
	}
	for _, rel := range []string{"notes.txt", "src/main.go", "docs/guide.md", "data/table.csv"} {
		f := newFixture(t, "n\n")
		f.propose("propose_write", write(rel, "x\n"))
		if screen := f.tty.String(); strings.Contains(screen, "WARNING") {
			t.Errorf("%s is plain data, but was warned:\n%s", rel, screen)
		}
	}

	refused := map[string]string{
		"tools/hooks/pre-commit": "core.hooksPath in .git/config",
		"tools/hooks/post-merge": "core.hooksPath in .git/config",
		".yarn-bin/yarn.cjs":     "yarnPath in .yarnrc.yml",
		"plugins/p.cjs":          "path in .yarnrc.yml",
		"preload/boot.js":        "--require in .npmrc",
		"bun-setup.ts":           "preload in bunfig.toml",
		"my.pnpmfile.cjs":        "pnpmfile in .npmrc",
	}
	for rel, by := range refused {
		f := newFixture(t, "y\n")
		f.write(".git/config", "[core]\n\thooksPath = tools/hooks\n")
		f.write(".yarnrc.yml", "yarnPath: .yarn-bin/yarn.cjs\nplugins:\n  - path: plugins/p.cjs\n")
		f.write(".npmrc", "node-options=--require ./preload/boot.js\npnpmfile=my.pnpmfile.cjs\n")
		f.write("bunfig.toml", "preload = [\"./bun-setup.ts\"]\n")
		f.write("tools/hooks/post-merge", "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(f.root, "tools/hooks/post-merge"), 0o755); err != nil {
			t.Fatal(err)
		}
		res := f.propose("propose_write", write(rel, "#!/bin/sh\ntouch pwned\n"))
		if !res.IsError || !strings.Contains(res.Text, by) || !strings.Contains(res.Text, "never written") || f.opens != 0 {
			t.Errorf("%s: result %+v (terminal opened %d times), want a refusal naming %q", rel, res, f.opens, by)
		}
	}
}

// A linked worktree's .git is a file naming its git folder; the
// core.hooksPath of that folder's common config is read too.
func TestHooksPathOfAWorktree(t *testing.T) {
	f := newFixture(t, "y\n")
	gitdir := filepath.Join(f.outside, "main.git", "worktrees", "wt")
	if err := os.MkdirAll(gitdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "main.git", "config"), []byte("[core]\n\thooksPath = githooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(".git", "gitdir: "+gitdir+"\n")
	res := f.propose("propose_write", write("githooks/pre-commit", "#!/bin/sh\n"))
	if !res.IsError || !strings.Contains(res.Text, "core.hooksPath in") || f.opens != 0 {
		t.Fatalf("result %+v, terminal opened %d times", res, f.opens)
	}
}
