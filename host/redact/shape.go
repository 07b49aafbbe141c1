package redact

import (
	"bytes"
	"path"
	"strings"
)

// Shape is what kind of file a text is, for the rules that run only on
// some (config_rules.go).
type Shape uint8

const (
	// Config: a configuration file (ini, toml, yaml, json, .env,
	// properties, ...): the moat-config- rules run on it.
	Config Shape = 1 << iota
	// Netrc: a netrc-like file: the moat-netrc- rules run on it too.
	Netrc
)

// The names ShapeOf knows, each list a string of " "-separated entries:
// configExts are the extensions of configuration files, codeExts those of
// source code (and prose), never configuration-shaped whatever their
// content (a `password := "x"` in Go is code, which is why gitleaks'
// generic rule is left out).
const (
	configExts = " .ini .cfg .conf .cnf .toml .yaml .yml .json .json5 .jsonc .properties .env .tfvars .tf .hcl" +
		" .netrc .npmrc .pypirc .yarnrc .kubeconfig .s3cfg .boto .dockercfg .authinfo .credentials "
	codeExts = " .go .py .pyi .js .mjs .cjs .ts .tsx .jsx .java .kt .kts .scala .c .h .cc .cpp .cxx .hpp .hh .cs" +
		" .rb .rs .php .swift .m .mm .sh .bash .zsh .fish .ps1 .pl .pm .lua .r .jl .dart .ex .exs .erl .hs .ml" +
		" .clj .groovy .gradle .sql .vue .svelte .zig .nim .v .sv .vhd .f90 .pas .s .asm .tcl .coffee .elm .fs" +
		" .fsx .vb .cshtml .html .htm .css .scss .md .rst .tex "
	netrcNames  = " .netrc _netrc netrc .authinfo authinfo "
	configNames = " credentials config kubeconfig .npmrc .pypirc .yarnrc .s3cfg .boto .dockercfg .env env .envrc "
)

// in reports whether s is one of list's entries.
func in(list, s string) bool {
	return s != "" && !strings.Contains(s, " ") && strings.Contains(list, " "+s+" ")
}

// ShapeOf decides a file's shape from its name (the base name, lower
// case) and, when the name does not decide, the start of its content
// (head: up to shapeHead bytes are looked at):
//
//   - a netrc name (.netrc, _netrc, netrc, .authinfo, authinfo, and
//     *.netrc, *.authinfo) is Netrc and Config;
//   - a configuration extension (configExts: .ini .cfg .conf .cnf .toml
//     .yaml .yml .json .json5 .jsonc .properties .env .tfvars .tf .hcl
//     ...) or name (credentials, config, kubeconfig, .npmrc, .env,
//     .env.*, *.env ...) is Config;
//   - a source code extension (codeExts: .go .py .js .ts .java .c .rb .rs
//     .sh .md .html ...) is neither, whatever its content;
//   - any other file (no extension, .txt, ...) is Config when its content
//     is configuration-shaped (looksConfig).
func ShapeOf(name string, head []byte) Shape {
	base := strings.ToLower(path.Base(strings.ReplaceAll(name, `\`, "/")))
	ext := path.Ext(base)
	switch {
	case in(netrcNames, base) || ext == ".netrc" || ext == ".authinfo":
		return Netrc | Config
	case in(configExts, ext) || in(configNames, base) || strings.HasPrefix(base, ".env"):
		return Config
	case in(codeExts, ext):
		return 0
	case looksConfig(head):
		return Config
	}
	return 0
}

// shapeHead is how much of a file's start looksConfig reads, and
// shapeLines how many of its lines.
const (
	shapeHead  = 16 << 10
	shapeLines = 64
)

// looksConfig reports whether text starts as configuration does: of its
// first shapeLines lines that are neither blank nor comments (#, ;, //,
// !), at least one is an assignment (key = value, key: value, key :=
// value, key => value, "key": value, export KEY=value, with a key of
// letters, digits, '_', '.', '-', '/') and every one is an assignment, a
// [section], a YAML list item ("- x"), brackets alone, an indented line
// after an assignment (a YAML block), or a netrc line (machine, default,
// login, password, account, macdef).
func looksConfig(text []byte) bool {
	text = text[:min(len(text), shapeHead)]
	if i := bytes.LastIndexByte(text, '\n'); i >= 0 && len(text) == shapeHead {
		text = text[:i] // a line cut by the head's end is not judged
	}
	assign, seen := false, 0
	for len(text) > 0 && seen < shapeLines {
		var line []byte
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, nil
		}
		indented := len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
		l := bytes.TrimSpace(line)
		if len(l) == 0 || l[0] == '#' || l[0] == ';' || l[0] == '!' || bytes.HasPrefix(l, []byte("//")) {
			continue
		}
		seen++
		switch {
		case isAssignment(l):
			assign = true
		case l[0] == '[' && l[len(l)-1] == ']',
			l[0] == '-' && (len(l) == 1 || l[1] == ' '),
			strings.Trim(string(l), "{}[], ") == "",
			indented && assign,
			isNetrcLine(l):
		default:
			return false
		}
	}
	return assign
}

// isAssignment: a key, optionally quoted or after "export ", then =, :,
// := or => .
func isAssignment(l []byte) bool {
	l = bytes.TrimPrefix(l, []byte("export "))
	q := byte(0)
	if len(l) > 0 && (l[0] == '"' || l[0] == '\'') {
		q, l = l[0], l[1:]
	}
	n := 0
	for n < len(l) && (isWordByte(l[n]) || l[n] == '.' || l[n] == '-' || l[n] == '/') {
		n++
	}
	if n == 0 {
		return false
	}
	l = l[n:]
	if q != 0 {
		if len(l) == 0 || l[0] != q {
			return false
		}
		l = l[1:]
	}
	l = bytes.TrimLeft(l, " \t")
	return len(l) > 0 && (l[0] == '=' || l[0] == ':')
}

func isNetrcLine(l []byte) bool {
	w := l
	if i := bytes.IndexAny(l, " \t"); i >= 0 {
		w = l[:i]
	}
	switch string(w) {
	case "machine", "default", "login", "password", "account", "macdef":
		return true
	}
	return false
}
