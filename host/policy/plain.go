package policy

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// Plain data, by structure. A proposal goes to the prompt without a
// warning only when its file is of a kind no tool loads as code or as
// configuration; [NotPlain] says why one is not, and the gate shows that
// as the warning. The names of the codeFiles table are one kind; the
// others are judged by the file's shape, not by a list of tools:
//
//   - a dotfile, or a file inside a dot-folder (tools' and editors'
//     configuration lives there: .github/, .config/, .cargo/, ...);
//   - a file that is executable now (any x bit) or whose current or
//     new content starts with "#!";
//   - a script by its extension (.sh, .bash, .zsh, .fish, .ps1, .psm1,
//     .bat, .cmd, .command);
//   - a build manifest or task file by name (buildNames, buildExts, the
//     prefixes Makefile, Dockerfile, Taskfile., docker-compose, compose.
//     unless the extension is a document's, and pip's requirements*.txt
//     and constraints*.txt);
//   - a configuration file by its shape: an extension that is a
//     configuration format (.toml, .yaml, .yml, .json, .jsonc, .json5,
//     .ini, .cfg, .conf, .config, .properties, .plist), or a name
//     without an extension ending in "rc" (tools' rc files: npmrc; not
//     "src");
//   - a file a config in the root names as a build script (see
//     [ConfigNamed]).
//
// Everything else is plain: a project's own source files (a person runs
// them by building or running the project), documentation, data.

// scriptExts are the extensions of files a shell or interpreter runs as
// they are.
var scriptExts = map[string]bool{
	".sh": true, ".bash": true, ".zsh": true, ".fish": true, ".ksh": true, ".ps1": true, ".psm1": true,
	".bat": true, ".cmd": true, ".command": true,
}

// configExts are configuration formats: a file with one of them is some
// tool's settings more often than not.
var configExts = map[string]bool{
	".toml": true, ".yaml": true, ".yml": true, ".json": true, ".jsonc": true, ".json5": true, ".ini": true,
	".cfg": true, ".conf": true, ".config": true, ".properties": true, ".plist": true,
}

// buildNames are build manifests and task files by name (lower-cased),
// beyond the codeFiles table: each tool reads and runs what they say.
var buildNames = map[string]bool{
	"makefile": true, "gnumakefile": true, "makefile.am": true, "makefile.in": true, "configure": true, "configure.ac": true,
	"justfile": true, "rakefile": true, "gemfile": true, "vagrantfile": true, "dockerfile": true, "containerfile": true,
	"jenkinsfile": true, "procfile": true, "brewfile": true, "podfile": true, "fastfile": true, "snakefile": true,
	"sconstruct": true, "sconscript": true, "build": true, "build.bazel": true, "workspace": true, "module.bazel": true,
	"meson.build": true, "cmakelists.txt": true, "build.xml": true, "build.sbt": true, "project.clj": true, "deps.edn": true,
	"mix.exs": true, "rebar.config": true, "dune": true, "dune-project": true, "setup.py": true, "noxfile.py": true,
	"conftest.py": true, "build.rs": true, "build.zig": true, "earthfile": true, "tiltfile": true, "buildfile": true,
	"pom.xml": true, "package.swift": true, "cakefile": true, "gulpfile.js": true, "gruntfile.js": true,
	"pipfile": true,
}

// docExts keep a name that begins like a build file's a document
// (Makefile.md, Dockerfile.txt).
var docExts = map[string]bool{".md": true, ".txt": true, ".rst": true, ".html": true, ".adoc": true, ".org": true, ".pdf": true}

// buildExts are build files by extension.
var buildExts = map[string]bool{
	".mk": true, ".make": true, ".cmake": true, ".gradle": true, ".kts": true, ".bzl": true, ".star": true,
	".nix": true, ".gemspec": true, ".cabal": true, ".sbt": true, ".dockerfile": true,
}

// NotPlain reports why writing rel (root-relative, cleaned) is not plain
// data, or false when it is. mode is the file's mode now (0 for a new
// file); old and new are its current and proposed content.
func NotPlain(rel string, mode fs.FileMode, old, new []byte) (why string, ok bool) {
	parts := strings.Split(rel, "/")
	for _, d := range parts[:len(parts)-1] {
		if strings.HasPrefix(d, ".") && d != "." && d != ".." {
			return "it is inside the dot-folder " + d + ", where tools keep their configuration", true
		}
	}
	base := parts[len(parts)-1]
	low := normalizeName(base)
	ext := path.Ext(low)
	switch {
	case strings.HasPrefix(base, "."):
		return "it is a dotfile, the kind of file tools read as their configuration", true
	case mode&0o111 != 0:
		return "it is executable", true
	case bytes.HasPrefix(old, []byte("#!")) || bytes.HasPrefix(new, []byte("#!")):
		return "it starts with #!, so it runs as a program", true
	case scriptExts[ext]:
		return "it is a script (" + ext + ")", true
	case buildNames[low] || buildExts[ext] || !docExts[ext] && (strings.HasPrefix(low, "makefile") || strings.HasPrefix(low, "dockerfile") ||
		strings.HasPrefix(low, "taskfile.") || strings.HasPrefix(low, "docker-compose") || strings.HasPrefix(low, "compose.")) ||
		ext == ".txt" && (strings.HasPrefix(low, "requirements") || strings.HasPrefix(low, "constraints")):
		return "it is a build manifest or task file, whose commands a tool runs", true
	case configExts[ext]:
		return "it is a configuration file (" + ext + "), which a tool may read as its settings", true
	case ext == "" && len(low) > 2 && strings.HasSuffix(low, "rc") && low != "src":
		return "its name is an rc file's, which a tool reads as its settings", true
	}
	return "", false
}

// Named is a file or folder that a configuration file in the root names
// as code to run: a hooks folder, the file a package manager runs in its
// own place or preloads, a build script.
type Named struct {
	Rel   string // root-relative, cleaned
	By    string // what names it: "core.hooksPath in .git/config"
	Never bool   // run without anyone deciding to (hooks, preloads): never written
}

// ConfigNamed reads the root's configuration files (through read, which
// returns a root-relative file's content) and returns what they name as
// code to run: git's core.hooksPath (the root's .git/config, and the
// user's git config from extra, absolute files given as contents), the
// file yarn runs as itself and its plugins (.yarnrc.yml yarnPath and
// plugins' path, .yarnrc yarn-path), the files npm and pnpm preload or
// run (.npmrc node-options --require/-r/--import/--loader, pnpmfile,
// script-shell), Bun's preload (bunfig.toml) — each never written — and
// the build scripts a manifest names (Cargo.toml build, package.json
// scripts' files), warned. toRel maps a path a config gives (relative to
// the root, absolute, or ~/) to a root-relative one, false when it is
// outside the root.
func ConfigNamed(read func(rel string) ([]byte, bool), extra map[string][]byte, toRel func(p string) (string, bool)) []Named {
	var out []Named
	add := func(p, by string, never bool) {
		if r, ok := toRel(p); ok && r != "." && r != "" {
			out = append(out, Named{Rel: r, By: by, Never: never})
		}
	}
	hooks := func(content []byte, by string) {
		p := gitConfigParser{s: strings.TrimPrefix(string(content), "\ufeff")}
		p.parse(func(name, value string, hasValue bool) bool {
			if name == "core.hookspath" && hasValue && strings.TrimSpace(value) != "" {
				add(strings.TrimSpace(value), "core.hooksPath in "+by, true)
			}
			return true
		})
	}
	if b, ok := read(".git/config"); ok {
		hooks(b, ".git/config")
	}
	for by, b := range extra {
		hooks(b, by)
	}
	if b, ok := read(".yarnrc.yml"); ok {
		for _, m := range yarnPathRE.FindAllStringSubmatch(string(b), -1) {
			add(unquote(m[2]), "yarn ("+m[1]+" in .yarnrc.yml)", true)
		}
	}
	if b, ok := read(".yarnrc"); ok {
		for _, m := range yarn1PathRE.FindAllStringSubmatch(string(b), -1) {
			add(unquote(m[1]), "yarn (yarn-path in .yarnrc)", true)
		}
	}
	if b, ok := read(".npmrc"); ok {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, found := strings.Cut(line, "=")
			if !found {
				continue
			}
			k, v = strings.ToLower(strings.TrimSpace(k)), unquote(strings.TrimSpace(v))
			switch k {
			case "pnpmfile", "global-pnpmfile", "script-shell":
				add(v, "npm or pnpm ("+k+" in .npmrc)", true)
			case "node-options":
				f := strings.Fields(v)
				for i, a := range f {
					for _, o := range []string{"--require", "-r", "--import", "--loader", "--experimental-loader"} {
						if a == o && i+1 < len(f) {
							add(unquote(f[i+1]), "node ("+o+" in .npmrc's node-options)", true)
						} else if after, ok := strings.CutPrefix(a, o+"="); ok {
							add(unquote(after), "node ("+o+" in .npmrc's node-options)", true)
						}
					}
				}
			}
		}
	}
	if b, ok := read("bunfig.toml"); ok {
		for _, m := range preloadRE.FindAllStringSubmatch(string(b), -1) {
			for _, q := range quotedRE.FindAllStringSubmatch(m[1], -1) {
				add(q[1], "Bun (preload in bunfig.toml)", true)
			}
		}
	}
	if b, ok := read("Cargo.toml"); ok {
		for _, m := range cargoBuildRE.FindAllStringSubmatch(string(b), -1) {
			add(m[1], "cargo (build in Cargo.toml)", false)
		}
	}
	if b, ok := read("package.json"); ok {
		var pj struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal(b, &pj) == nil {
			for name, cmd := range pj.Scripts {
				for _, tok := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune(" \t;&|()<>\"'`", r) }) {
					if strings.Contains(tok, "/") || scriptExts[path.Ext(tok)] || jsExts[path.Ext(tok)] {
						add(tok, "npm (the "+name+" script in package.json)", false)
					}
				}
			}
		}
	}
	return out
}

var (
	yarnPathRE   = regexp.MustCompile(`(?m)^\s*(?:-\s*)?(yarnPath|path)\s*:\s*(\S+)`)
	yarn1PathRE  = regexp.MustCompile(`(?m)^\s*yarn-path\s+(\S+)`)
	preloadRE    = regexp.MustCompile(`(?ms)^\s*preload\s*=\s*(\[[^\]]*\]|"[^"]*"|'[^']*')`)
	quotedRE     = regexp.MustCompile(`["']([^"']+)["']`)
	cargoBuildRE = regexp.MustCompile(`(?m)^\s*build\s*=\s*["']([^"']+)["']`)
	jsExts       = map[string]bool{".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".mts": true, ".cts": true, ".py": true, ".rb": true, ".pl": true}
)

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// UnderNamed reports the entry of named that rel is or lies under, a
// never-written one first. Names are compared as the deny-list compares
// them.
func UnderNamed(rel string, named []Named) (Named, bool) {
	n := normalize(rel)
	var warned *Named
	for i := range named {
		d := normalize(named[i].Rel)
		if n == d || strings.HasPrefix(n, d+"/") {
			if named[i].Never {
				return named[i], true
			}
			if warned == nil {
				warned = &named[i]
			}
		}
	}
	if warned != nil {
		return *warned, true
	}
	return Named{}, false
}
