package policy

import "testing"

func TestRunsCode(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		want bool
	}{
		{".husky/pre-commit", true},
		{"web/.husky/pre-push", true},
		{".pre-commit-config.yaml", true},
		{"sub/.Pre-Commit-Config.yaml", true},
		{".vscode/mcp.json", true},
		{"app.code-workspace", true},
		{".devcontainer/devcontainer.json", true},
		{".github/workflows/ci.yml", true},
		{"notes.txt", false},
		{"husky/pre-commit", false},
		{"my.husky/x", false},
		{"mcp.json", false},
		{"docs/pre-commit-config.yaml.md", false},
	} {
		tool, ok := RunsCode(tc.rel)
		if ok != tc.want || ok && tool == "" {
			t.Errorf("RunsCode(%q) = %q, %v; want ok=%v", tc.rel, tool, ok, tc.want)
		}
	}
}
