package policy

import (
	"path"
	"strings"
)

// Git directories are recognised by their structure, not their name: git
// takes any folder for a repository (a bare one, or the gitdir of a linked
// worktree) when it holds what setup.c's is_git_directory checks, and then
// reads that folder's config (core.fsmonitor, hooks, filters: commands) on
// the next `git status` run inside it. A model that writes HEAD, objects/
// and refs/ into a folder named anything has made one. The name rules
// (".git", "*.git") cover the usual names; this covers the rest.
//
// is_git_directory: HEAD (validate_headref: a "ref: refs/..." file, an
// object id, or a link into refs/), then objects/ and refs/ in the common
// dir, which is the folder itself unless a commondir file names another
// one. moat asks less: a HEAD of any content, and objects/ and refs/ (or
// commondir) of any type, so it errs towards refusing.
// https://git-scm.com/docs/gitrepository-layout

// isGitDir is is_git_directory over the entries has reports present
// (lower-case names: head, objects, refs, commondir).
func isGitDir(has func(marker string) bool) bool {
	return has("head") && (has("commondir") || has("objects") && has("refs"))
}

// GitDir reports the folder above rel (the root included) that git would
// take for a repository once rel (root-relative, cleaned) is written: a
// folder that is one already, or one that writing rel completes. exists
// reports whether a root-relative path exists (without following a link
// at the end); the caller answers from the disk. Every write inside such a
// folder is git's internals and is refused by the gate.
func GitDir(rel string, exists func(rel string) bool) (dir string, ok bool) {
	if rel == "." || rel == "" {
		return "", false
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		d := "."
		if i > 0 {
			d = strings.Join(parts[:i], "/")
		}
		next := normalizeName(parts[i]) // the entry under d this write creates or changes
		has := func(marker string) bool {
			return next == marker || exists(path.Join(d, markerName(marker)))
		}
		if isGitDir(has) {
			return d, true
		}
	}
	return "", false
}

// markerName is the name git itself uses for a marker.
func markerName(m string) string {
	if m == "head" {
		return "HEAD"
	}
	return m
}

// GitHead reports whether writing content to rel would make a HEAD that
// git accepts (validate_headref: "ref:" then "refs/...", or an object id
// in hex, SHA-1 or SHA-256), whatever folder it is in. A folder is a
// repository only with a valid HEAD, so refusing every such HEAD keeps a
// model from starting one under any name, in any order of writes; a file
// named HEAD with other content is an ordinary file to git.
func GitHead(rel string, content []byte) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	if normalizeName(base) != "head" {
		return false
	}
	s := string(content)
	if len(s) > 255 {
		s = s[:255] // git reads at most this much of HEAD
	}
	if rest, ok := strings.CutPrefix(s, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(rest, " \t\n\v\f\r"), "refs/")
	}
	n := 0
	for n < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[n]) >= 0 {
		n++
	}
	return n >= 40 // get_oid_hex_any: a SHA-1 id (40) or a SHA-256 one (64) at the start
}
