package policy

// codeFile is one row of the table of files that make a tool run the code
// or commands written in them: the pattern (matched as the deny-list
// matches), the tool, and the decision. never: a tool runs it without
// anyone deciding to run anything (opening the folder in an editor,
// starting a shell or an agent, committing, cd, any invocation of a
// package manager), so a proposal to write it is refused before anyone is
// asked. Otherwise it runs when a person runs the tool on purpose, writing
// it is ordinary work, and the approval prompt marks it "this file makes
// TOOL run code". SECURITY.md tables the same families with the
// documentation each comes from; keep the two in step.
type codeFile struct {
	pattern, tool string
	never         bool
}

// codeFiles is the one table: the never-write list is its never rows
// (with moat's own configuration), the prompt's warning all of them.
var codeFiles = []codeFile{
	// Editors and agents: workspace settings, tasks that run on folder
	// open, MCP servers they start, commands and hooks.
	{".vscode/tasks.json", "VS Code", true}, {".vscode/settings.json", "VS Code", true}, {".vscode/launch.json", "VS Code", true},
	{".vscode/mcp.json", "VS Code", true}, {"*.code-workspace", "VS Code", true},
	{".devcontainer", "Dev Containers", true}, {".devcontainer.json", "Dev Containers", true},
	{".idea", "JetBrains IDEs", true}, {".zed", "Zed", true},
	{".mcp.json", "MCP clients", true}, {".cursor", "Cursor", true}, {".claude", "Claude Code", true}, {".gemini", "Gemini CLI", true},
	{".codex", "Codex", true}, {".continue", "Continue", true}, {".windsurf", "Windsurf", true}, {".roo", "Roo Code", true},
	{".kiro", "Kiro", true}, {".amazonq", "Amazon Q Developer", true}, {".junie", "Junie", true},
	{"opencode.json", "opencode", true}, {"opencode.jsonc", "opencode", true}, {".opencode", "opencode", true},
	{".aider*", "aider", true},
	// Every editor's and agent's settings folder, whatever file in it
	// (issue 29: a settings file the rows above did not name).
	{".vscode/*", "VS Code", true}, {".fleet", "Fleet", true}, {".nova", "Nova", true}, {".helix", "Helix", true},
	{"*.sublime-project", "Sublime Text", true}, {".theia", "Theia", true},
	{".cline", "Cline", true}, {".clinerules", "Cline", true}, {".augment", "Augment", true}, {".trae", "Trae", true},
	{".qwen", "Qwen Code", true}, {".crush", "Crush", true}, {"crush.json", "Crush", true}, {".crush.json", "Crush", true},
	{".goose", "goose", true}, {".openhands", "OpenHands", true}, {".factory", "Factory Droid", true},
	{".copilot", "GitHub Copilot CLI", true}, {".github/copilot", "GitHub Copilot", true}, {".agents", "agents", true},
	{".qodo", "Qodo", true}, {".tabnine", "Tabnine", true}, {".codeium", "Codeium", true}, {".rovodev", "Rovo Dev", true},
	{".warp", "Warp", true}, {".amp", "Amp", true},
	// Editors' per-folder rc files, read on start in that folder.
	{".nvimrc", "Neovim (exrc)", true}, {".vimrc", "Vim (exrc)", true}, {".gvimrc", "Vim (exrc)", true},
	{".lvimrc", "Vim (localvimrc)", true}, {".vim", "Vim", true}, {"nvim/init.lua", "Neovim", true}, {"nvim/init.vim", "Neovim", true},
	{".config/nvim", "Neovim", true}, {".dir-locals.el", "Emacs", true}, {".dir-locals-2.el", "Emacs", true},
	{".emacs", "Emacs", true}, {".emacs.d", "Emacs", true},
	// git: hooks, filters, submodule commands, hook managers.
	{".git", "git", true}, {"*.git", "git", true}, {".gitattributes", "git", true}, {".gitmodules", "git", true},
	{".githooks", "git", true}, {".husky", "git (husky hooks)", true}, {".pre-commit-config.yaml", "git (pre-commit hooks)", true},
	{"lefthook.yml", "git (lefthook hooks)", true}, {".lefthook.yml", "git (lefthook hooks)", true},
	{"lefthook-local.yml", "git (lefthook hooks)", true},
	// Every spelling the hook managers document for their config.
	{"lefthook.{yml,yaml,toml,json,jsonc}", "git (lefthook hooks)", true},
	{".lefthook.{yml,yaml,toml,json,jsonc}", "git (lefthook hooks)", true},
	{"lefthook-local.{yml,yaml,toml,json,jsonc}", "git (lefthook hooks)", true},
	{".lefthook-local.{yml,yaml,toml,json,jsonc}", "git (lefthook hooks)", true},
	{".config/lefthook.{yml,yaml,toml,json,jsonc}", "git (lefthook hooks)", true},
	{".lefthook", "git (lefthook scripts)", true}, {".lefthook-local", "git (lefthook scripts)", true},
	{".pre-commit-config.yml", "git (pre-commit hooks)", true}, {".pre-commit-hooks.yaml", "git (pre-commit hooks)", true},
	{".huskyrc", "git (husky hooks)", true}, {".huskyrc.*", "git (husky hooks)", true}, {"husky.config.*", "git (husky hooks)", true},
	{".simple-git-hooks.*", "git (simple-git-hooks)", true}, {"simple-git-hooks.*", "git (simple-git-hooks)", true},
	{".overcommit.yml", "git (overcommit hooks)", true}, {".lintstagedrc", "git (lint-staged, run by hooks)", true},
	{".lintstagedrc.*", "git (lint-staged, run by hooks)", true}, {"lint-staged.config.*", "git (lint-staged, run by hooks)", true},
	// Environment on cd.
	{".envrc", "direnv", true},
	{"mise.toml", "mise", true}, {".mise.toml", "mise", true}, {"mise.*.toml", "mise", true}, {".mise.*.toml", "mise", true},
	{".mise", "mise", true}, {".config/mise.toml", "mise", true}, {".config/mise", "mise", true},
	// Package managers' hooks and preloads: run by every invocation.
	{".npmrc", "npm", true}, {".yarnrc", "yarn", true}, {".yarnrc.yml", "yarn", true}, {".pnpmfile.cjs", "pnpm", true},
	{".pnpmfile.mjs", "pnpm", true}, {"bunfig.toml", "Bun", true}, {".bunfig.toml", "Bun", true},
	{"*.pth", "Python (site)", true}, {"sitecustomize.py", "Python (site)", true}, {"usercustomize.py", "Python (site)", true},
	{"pip.conf", "pip", true}, {"pip.ini", "pip", true},
	// The files a package manager's config names to run in place of the
	// tool, or as its plugins (more are read from the root's config: see
	// ConfigNamed).
	{".yarn/releases", "yarn", true}, {".yarn/plugins", "yarn", true}, {".yarn/sdks", "yarn", true},
	// Linters and formatters whose configuration is a program, which
	// editors' extensions load when a file is opened.
	{"eslint.config.*", "ESLint", true}, {".eslintrc.js", "ESLint", true}, {".eslintrc.cjs", "ESLint", true},
	{"prettier.config.*", "Prettier", true}, {".prettierrc.{js,cjs,mjs,ts,cts,mts}", "Prettier", true},
	{"stylelint.config.*", "Stylelint", true}, {".stylelintrc.{js,cjs,mjs}", "Stylelint", true},
	// Shells' login, logout and startup files, REPLs' and debuggers' rc
	// files: run when one starts there.
	{".bashrc", "bash", true}, {".bash_profile", "bash", true}, {".bash_login", "bash", true}, {".bash_logout", "bash", true},
	{".profile", "the login shell", true}, {".zshrc", "zsh", true}, {".zprofile", "zsh", true}, {".zshenv", "zsh", true},
	{".zlogin", "zsh", true}, {".zlogout", "zsh", true}, {".kshrc", "ksh", true}, {".cshrc", "csh", true}, {".tcshrc", "tcsh", true},
	{".login", "csh", true}, {".logout", "csh", true}, {"fish/config.fish", "fish", true}, {"fish/conf.d", "fish", true},
	{".inputrc", "readline", true}, {".pythonrc", "python", true}, {".pythonrc.py", "python", true},
	{".irbrc", "irb", true}, {".pryrc", "pry", true}, {".psqlrc", "psql", true}, {".sqliterc", "sqlite3", true},
	{".rprofile", "R", true}, {".iex.exs", "IEx", true}, {".ghci", "GHCi", true}, {".gdbinit", "gdb", true},
	{".lldbinit", "lldb", true}, {".exrc", "vi", true}, {".nvim.lua", "Neovim", true}, {".mongoshrc.js", "mongosh", true},
	// More debuggers' and REPLs' startup files, each read from the folder
	// it starts in or from home.
	{".gdbearlyinit", "gdb", true}, {"gdb/gdbinit", "gdb", true}, {"gdb/gdbearlyinit", "gdb", true},
	{".lldbinit-*", "lldb", true}, {"lldb/lldbinit", "lldb", true}, {".pdbrc", "pdb", true}, {".pdbrc.py", "pdb", true},
	{".perldb", "the Perl debugger", true}, {".jdbrc", "jdb", true}, {"jdb.ini", "jdb", true}, {".radare2rc", "radare2", true},
	{".ocamlinit", "OCaml", true}, {"utop/init.ml", "utop", true}, {".erlang", "Erlang", true}, {".guile", "Guile", true},
	{".sbclrc", "SBCL", true}, {".clisprc.lisp", "CLISP", true}, {".racketrc", "Racket", true},
	{"config/startup.jl", "Julia", true}, {".ipython", "IPython", true}, {"ipython_config.py", "IPython", true},
	{"ptpython/config.py", "ptpython", true}, {".octaverc", "Octave", true}, {".tclshrc", "tclsh", true}, {".wishrc", "wish", true},
	{".mongorc.js", "mongo", true}, {".myclirc", "mycli", true}, {".renviron", "R", true}, {"rprofile.site", "R", true},
	{".gnuplot", "gnuplot", true}, {"ghc/ghci.conf", "GHCi", true}, {".sbtrc", "sbt", true},
	{"profiles.clj", "Leiningen", true}, {".lein/profiles.clj", "Leiningen", true},
	// Toolchain pins that may name a binary of the file's choosing.
	{"rust-toolchain", "rustup", true}, {"rust-toolchain.toml", "rustup", true},
	// moat's own configuration, and a make include moat cannot see used.
	{"Makefile.local", "make", true},
	{ConfigFileName, "moat", true},

	// Run when a person runs the tool (writing them is ordinary work).
	{"Makefile", "make", false}, {"makefile", "make", false}, {"GNUmakefile", "make", false}, {"*.mk", "make", false},
	{"justfile", "just", false}, {".justfile", "just", false}, {"Taskfile.yml", "task", false}, {"Taskfile.yaml", "task", false},
	{"package.json", "npm", false},
	{"setup.py", "pip", false}, {"pyproject.toml", "pip", false}, {"conftest.py", "pytest", false}, {"tox.ini", "tox", false},
	{"noxfile.py", "nox", false},
	{"build.rs", "cargo", false}, {".cargo/config.toml", "cargo", false}, {".cargo/config", "cargo", false},
	{"build.gradle", "Gradle", false}, {"build.gradle.kts", "Gradle", false}, {"settings.gradle", "Gradle", false},
	{"settings.gradle.kts", "Gradle", false}, {"gradlew", "Gradle", false}, {"pom.xml", "Maven", false}, {".mvn", "Maven", false},
	{"CMakeLists.txt", "CMake", false}, {"*.cmake", "CMake", false}, {"meson.build", "Meson", false},
	{"BUILD.bazel", "Bazel", false}, {"WORKSPACE", "Bazel", false}, {"MODULE.bazel", "Bazel", false}, {".bazelrc", "Bazel", false},
	{"Rakefile", "rake", false}, {"Gemfile", "Bundler", false}, {"composer.json", "Composer", false},
	{"Dockerfile", "docker build", false}, {"*.dockerfile", "docker build", false},
	{"docker-compose.yml", "docker compose", false}, {"docker-compose.yaml", "docker compose", false},
	{"compose.yml", "docker compose", false}, {"compose.yaml", "docker compose", false},
	{"docker-compose.override.yml", "docker compose", false}, {"docker-compose.override.yaml", "docker compose", false},
	{"compose.override.yml", "docker compose", false}, {"compose.override.yaml", "docker compose", false},
	{".github/workflows", "GitHub Actions", false}, {".gitlab-ci.yml", "GitLab CI", false}, {".circleci", "CircleCI", false},
	{"Jenkinsfile", "Jenkins", false}, {".travis.yml", "Travis CI", false}, {"azure-pipelines.yml", "Azure Pipelines", false},
	{"flake.nix", "nix", false}, {"shell.nix", "nix", false}, {"default.nix", "nix", false},
	// Agents' instruction files: moat with --agents-md, and other agents,
	// put them in the system prompt of every later session there.
	{"AGENTS.md", "moat (--agents-md) and other agents", false}, {"CLAUDE.md", "Claude Code", false},
	{"GEMINI.md", "Gemini CLI", false},
	// Toolchain pins that fetch and run a release of the named version.
	{".tool-versions", "asdf or mise", false}, {".nvmrc", "nvm", false}, {".node-version", "Node.js version managers", false},
	{".python-version", "pyenv or uv", false}, {".ruby-version", "Ruby version managers", false},
	{".terraform-version", "tfenv", false}, {".sdkmanrc", "SDKMAN!", false},
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
	tools := make(map[string]string, len(codeFiles))
	for _, r := range codeFiles {
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
