package policy

import (
	"path"
	"strings"
)

// runsCode lists files that are not secrets and that a proposal may write,
// but whose content a local tool runs as a program, or which tell a tool
// which program to start, the next time the user works in the folder. The
// write gate marks them with a loud warning, so the person reviews the
// change as code rather than as text.
//
// A pattern is matched against the whole root-relative path (lower-cased):
// "dir/" matches everything under a folder of that name anywhere in the
// tree, "*.ext" a base name suffix, anything else a base name, or a path
// suffix when it contains a "/".
//
// This is a minimal list; the deny-list work (issue 14) owns the final one.
var runsCode = []struct{ pattern, tool string }{
	{".husky/", "husky (git hooks)"},
	{".githooks/", "git (hooks, when core.hooksPath points here)"},
	{".pre-commit-config.yaml", "pre-commit"},
	{"lefthook.yml", "lefthook (git hooks)"},
	{".lefthook.yml", "lefthook (git hooks)"},
	{".vscode/mcp.json", "VS Code (MCP servers it starts)"},
	{"*.code-workspace", "VS Code (workspace tasks and settings)"},
	{".devcontainer/", "Dev Containers (commands run when the container is built)"},
	{".github/workflows/", "GitHub Actions"},
	{".gitlab-ci.yml", "GitLab CI"},
}

// RunsCode reports whether writing rel (cleaned, root-relative,
// slash-separated) changes what a local tool runs, and names the tool.
// Such files are not refused; the approval gate warns about them.
func RunsCode(rel string) (tool string, ok bool) {
	p := strings.ToLower(rel)
	base := path.Base(p)
	for _, r := range runsCode {
		switch pat := r.pattern; {
		case strings.HasSuffix(pat, "/"):
			if strings.HasPrefix(p, pat) || strings.Contains(p, "/"+pat) {
				return r.tool, true
			}
		case strings.HasPrefix(pat, "*"):
			if strings.HasSuffix(base, pat[1:]) {
				return r.tool, true
			}
		case strings.Contains(pat, "/"):
			if p == pat || strings.HasSuffix(p, "/"+pat) {
				return r.tool, true
			}
		default:
			if base == pat {
				return r.tool, true
			}
		}
	}
	return "", false
}
