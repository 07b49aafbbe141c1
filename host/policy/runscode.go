package policy

// runsCode lists files that make a tool run the commands written in them,
// with the tool named: the approval prompt shows "this file makes TOOL run
// code" beside any proposal to write one. Those a user triggers without
// deciding to run anything (opening the folder in an editor, committing,
// starting an agent) are also on the never-write list (writeOnlyDeny), so
// the warning matters for them only when --allow opens one; the rest are
// build and CI files a person runs on purpose, where writing them is
// ordinary work and the mark is what keeps the approval informed.
var runsCode = []struct{ pattern, tool string }{
	// Run on their own: editors, git hooks, agents, direnv (never written).
	{".vscode/tasks.json", "VS Code"}, {".vscode/settings.json", "VS Code"}, {".vscode/launch.json", "VS Code"},
	{".vscode/mcp.json", "VS Code"}, {"*.code-workspace", "VS Code"},
	{".devcontainer", "Dev Containers"}, {".devcontainer.json", "Dev Containers"},
	{".idea", "JetBrains IDEs"},
	{".mcp.json", "MCP clients"}, {".cursor", "Cursor"}, {".claude", "Claude Code"}, {".gemini", "Gemini CLI"}, {".codex", "Codex"},
	{".git", "git"}, {"*.git", "git"}, {".gitattributes", "git"}, {".gitmodules", "git"}, {".githooks", "git"},
	{".husky", "git (husky hooks)"}, {".pre-commit-config.yaml", "git (pre-commit hooks)"},
	{"lefthook.yml", "git (lefthook hooks)"}, {".lefthook.yml", "git (lefthook hooks)"}, {"lefthook-local.yml", "git (lefthook hooks)"},
	{".envrc", "direnv"},
	{ConfigFileName, "moat"},
	// Run when a person runs the tool (writing them is ordinary work).
	{"Makefile", "make"}, {"makefile", "make"}, {"GNUmakefile", "make"}, {"*.mk", "make"}, {"Makefile.local", "make"},
	{"justfile", "just"}, {".justfile", "just"}, {"Taskfile.yml", "task"}, {"Taskfile.yaml", "task"},
	{"package.json", "npm"}, {".npmrc", "npm"}, {".yarnrc.yml", "yarn"},
	{"setup.py", "pip"}, {"pyproject.toml", "pip"}, {"conftest.py", "pytest"}, {"tox.ini", "tox"}, {"noxfile.py", "nox"},
	{"build.rs", "cargo"}, {".cargo/config.toml", "cargo"}, {".cargo/config", "cargo"},
	{"build.gradle", "Gradle"}, {"build.gradle.kts", "Gradle"}, {"settings.gradle", "Gradle"}, {"settings.gradle.kts", "Gradle"},
	{"gradlew", "Gradle"}, {"pom.xml", "Maven"}, {".mvn", "Maven"},
	{"CMakeLists.txt", "CMake"}, {"*.cmake", "CMake"}, {"meson.build", "Meson"}, {"BUILD.bazel", "Bazel"}, {"WORKSPACE", "Bazel"},
	{"MODULE.bazel", "Bazel"}, {".bazelrc", "Bazel"},
	{"Rakefile", "rake"}, {"Gemfile", "Bundler"}, {"composer.json", "Composer"},
	{"Dockerfile", "docker build"}, {"*.dockerfile", "docker build"}, {"docker-compose.yml", "docker compose"},
	{"docker-compose.yaml", "docker compose"}, {"compose.yml", "docker compose"}, {"compose.yaml", "docker compose"},
	{".github/workflows", "GitHub Actions"}, {".gitlab-ci.yml", "GitLab CI"}, {".circleci", "CircleCI"},
	{"Jenkinsfile", "Jenkins"}, {".travis.yml", "Travis CI"}, {"azure-pipelines.yml", "Azure Pipelines"},
	{"flake.nix", "nix"}, {"shell.nix", "nix"}, {"default.nix", "nix"},
	{".bashrc", "bash"}, {".bash_profile", "bash"}, {".profile", "the login shell"}, {".zshrc", "zsh"}, {".zprofile", "zsh"},
	{".zshenv", "zsh"},
}

// RunsCode reports whether writing path (root-relative, as the model gave
// it) changes what a tool runs, and names the tool. A folder on the list
// (".husky", ".github/workflows") covers everything beneath it; names are
// compared as the deny-list compares them (case folding, NFC/NFD, trailing
// dots and spaces). It is asked once per approval prompt, so it compiles
// its rules on each call rather than hold them anywhere.
func RunsCode(path string) (tool string, ok bool) {
	rel, err := Clean(path)
	if err != nil || rel == "." {
		return "", false
	}
	var rs ruleSet
	tools := make(map[string]string, len(runsCode))
	for _, r := range runsCode {
		if rs.add(r.pattern) == nil {
			tools[normalize(r.pattern)] = r.tool
		}
	}
	p := &Policy{}
	if rule, ok := p.walk(rel, &rs); ok {
		return tools[rule], true
	}
	return "", false
}
