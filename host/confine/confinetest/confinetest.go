// Package confinetest is the shared table of escape attempts that every
// layer of moat is tested against: the confined filesystem alone, each tool
// through the guest, each resolver, each isolation mode, and a control run
// with confinement switched off that proves each case really escapes there.
//
// A case is a tiny tree described in a layout language, after os.Root's
// root_test.go:
//
//	"d/"                  a folder
//	"f"                   a file whose content names it ("content of f")
//	"f: text"             a file with that content
//	"link => target"      a symlink; "ABS/" in the target is the test's
//	                      absolute temp folder, so "ABS/outside/secret" is
//	                      an absolute link out
//	"fifo|"               a named pipe (skipped where mkfifo is unavailable)
//
// Paths starting "ROOT/" are inside the sandbox root; others are beside it
// (the "outside"). Every case also gets outside/secret, ROOT-evil/x (a
// sibling whose name extends the root's, CVE-2025-53110), ROOT/.env and
// ROOT/.git/config, all holding a [Secret] marker that must never appear in
// any output.
//
// The same table runs with two roots ([BuildTwo]): the case's ROOT and a
// second root OTHER beside it, whose files hold the [Secret] too. The
// tools are asked about ROOT's names (ROOT/ then the case's path) and
// walk ROOT only, so the secret of OTHER appears only if a path or a
// link led from ROOT into OTHER; the cross_ cases are those links and
// ".." paths, and run with OTHER first and second, so each root is tried
// towards the other. With one root OTHER is one more folder outside it.
package confinetest

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moatdev/moat/host/confine"
)

// Secret is in every file that must never be read. A test fails if any
// output contains it.
const Secret = "MOAT-SECRET-7f3a"

// SecretMode is the mode of every file holding the [Secret], and of no
// other file a case lays out: a description of one (stat's mode line,
// the host's moat.stat) shows it, and [EveryTool] reports that as the
// secret itself.
const SecretMode = 0o604

// Case is one escape attempt.
type Case struct {
	Name   string
	Layout []string
	// Open is the path the model asks for, relative to the root.
	Open string
	// Escapes says whether, with confinement switched off, reading Open
	// really yields a secret: the control that proves the case is real.
	Escapes bool
	// Inside, when set, is content that a correct sandbox must return:
	// symlinks that stay inside the root work.
	Inside string
}

// Cases is the table. Each entry is one threat class from ARCHITECTURE.md.
func Cases() []Case {
	return []Case{
		{Name: "dotdot", Open: "../outside/secret", Escapes: true},
		{Name: "dotdot_deep", Layout: []string{"ROOT/a/b/"}, Open: "a/b/../../../outside/secret", Escapes: true},
		{Name: "sibling_prefix", Open: "../ROOT-evil/x", Escapes: true},
		{Name: "symlink_file_relative", Layout: []string{"ROOT/link => ../outside/secret"}, Open: "link", Escapes: true},
		{Name: "symlink_file_absolute", Layout: []string{"ROOT/link => ABS/outside/secret"}, Open: "link", Escapes: true},
		{Name: "symlink_dir_relative", Layout: []string{"ROOT/dlink => ../outside"}, Open: "dlink/secret", Escapes: true},
		{Name: "symlink_dir_absolute", Layout: []string{"ROOT/dlink => ABS/outside"}, Open: "dlink/secret", Escapes: true},
		{Name: "symlink_sibling_prefix", Layout: []string{"ROOT/link => ../ROOT-evil/x"}, Open: "link", Escapes: true},
		{Name: "symlink_chain", Layout: []string{"ROOT/a => b", "ROOT/b => c", "ROOT/c => ../outside/secret"}, Open: "a", Escapes: true},
		{Name: "symlink_chain_through_dir", Layout: []string{"ROOT/sub/", "ROOT/sub/l => ../../outside", "ROOT/m => sub/l"}, Open: "m/secret", Escapes: true},
		{Name: "symlink_then_dotdot", Layout: []string{"ROOT/sub/deeper/", "ROOT/d => sub/deeper"}, Open: "d/../../../outside/secret", Escapes: true},
		{Name: "symlink_loop", Layout: []string{"ROOT/a => b", "ROOT/b => a"}, Open: "a"},
		{Name: "symlink_self", Layout: []string{"ROOT/a => a"}, Open: "a"},
		{Name: "symlink_dangling_out", Layout: []string{"ROOT/link => ../outside/nothing"}, Open: "link"},
		{Name: "proc_self_root", Layout: []string{"ROOT/link => /proc/self/root" + "ABS/outside/secret"}, Open: "link", Escapes: true},
		{Name: "proc_self_cwd", Layout: []string{"ROOT/link => /proc/self/cwd/../outside/secret"}, Open: "link"},
		{Name: "deny_env", Open: ".env", Escapes: true},
		{Name: "deny_env_upper", Layout: []string{"ROOT/.ENV: " + Secret}, Open: ".ENV", Escapes: true},
		{Name: "deny_env_local", Layout: []string{"ROOT/.env.local: " + Secret}, Open: ".env.local", Escapes: true},
		{Name: "deny_trailing_dot", Layout: []string{"ROOT/.env.: " + Secret}, Open: ".env.", Escapes: true},
		{Name: "deny_trailing_space", Layout: []string{"ROOT/.env : " + Secret}, Open: ".env ", Escapes: true},
		{Name: "deny_symlink_to_env", Layout: []string{"ROOT/x => .env"}, Open: "x", Escapes: true},
		{Name: "deny_symlink_to_git", Layout: []string{"ROOT/g => .git"}, Open: "g/config", Escapes: true},
		{Name: "deny_git_dir", Open: ".git/config", Escapes: true},
		{Name: "deny_key", Layout: []string{"ROOT/server.key: " + Secret}, Open: "server.key", Escapes: true},
		{Name: "inside_symlink_works", Layout: []string{"ROOT/notes.txt: hello inside", "ROOT/link => notes.txt"}, Open: "link", Inside: "hello inside"},
		{Name: "inside_dir_symlink_works", Layout: []string{"ROOT/docs/", "ROOT/docs/a.md: doc inside", "ROOT/d => docs"}, Open: "d/a.md", Inside: "doc inside"},
		{Name: "inside_dotdot_works", Layout: []string{"ROOT/a/", "ROOT/b.txt: b inside"}, Open: "a/../b.txt", Inside: "b inside"},
		{Name: "environment_md_readable", Layout: []string{"ROOT/environment.md: env doc"}, Open: "environment.md", Inside: "env doc"},
		// Added with the security regression suite (issue 6).
		{Name: "symlink_dir_to_parent", Layout: []string{"ROOT/up => .."}, Open: "up/outside/secret", Escapes: true},
		{Name: "symlink_to_sibling_dir", Layout: []string{"ROOT/l => ../ROOT-evil"}, Open: "l/x", Escapes: true},
		{Name: "symlink_target_dotdot_inside_path", Layout: []string{"ROOT/sub/", "ROOT/l => sub/../../outside/secret"}, Open: "l", Escapes: true},
		{Name: "symlink_chain_too_long", Layout: []string{"ROOT/l1 => l2", "ROOT/l2 => l3", "ROOT/l3 => l4", "ROOT/l4 => l5", "ROOT/l5 => l6", "ROOT/l6 => l7", "ROOT/l7 => l8", "ROOT/l8 => l9", "ROOT/l9 => ../outside/secret"}, Open: "l1", Escapes: true},
		{Name: "symlink_dangling_inside", Layout: []string{"ROOT/l => nothing-here"}, Open: "l"},
		{Name: "symlink_target_backslash", Layout: []string{`ROOT/l => ..\outside\secret`}, Open: "l"},
		{Name: "backslash_dotdot", Open: `..\outside\secret`},
		{Name: "proc_self_cwd_dir", Layout: []string{"ROOT/d => /proc/self/cwd"}, Open: "d/secret"},
		{Name: "fifo_not_opened", Layout: []string{"ROOT/fifo|"}, Open: "fifo"},
		{Name: "fifo_through_symlink", Layout: []string{"ROOT/fifo|", "ROOT/l => fifo"}, Open: "l"},
		{Name: "deny_symlink_chain_to_env", Layout: []string{"ROOT/a => b", "ROOT/b => .env"}, Open: "a", Escapes: true},
		{Name: "deny_env_via_self_link", Layout: []string{"ROOT/here => ."}, Open: "here/.env", Escapes: true},
		{Name: "deny_env_mixed_case_local", Layout: []string{"ROOT/.Env.Local: " + Secret}, Open: ".Env.Local", Escapes: true},
		{Name: "deny_git_via_dir_link", Layout: []string{"ROOT/sub/", "ROOT/sub/g => ../.git"}, Open: "sub/g/config", Escapes: true},
		{Name: "inside_self_link_works", Layout: []string{"ROOT/here => .", "ROOT/n.txt: self inside"}, Open: "here/here/n.txt", Inside: "self inside"},
		// Issue 14.3: names a case-insensitive file system takes for a
		// denied one (U+017F long s, the Kelvin sign, a zero-width joiner).
		{Name: "deny_fold_long_s", Layout: []string{"ROOT/.aw\u017f/", "ROOT/.aw\u017f/credentials: " + Secret}, Open: ".aw\u017f/credentials", Escapes: true},
		{Name: "deny_fold_long_s_link", Layout: []string{"ROOT/.\u017fsh/", "ROOT/.\u017fsh/id_x: " + Secret, "ROOT/k => .\u017fsh/id_x"}, Open: "k", Escapes: true},
		{Name: "deny_fold_kelvin", Layout: []string{"ROOT/.\u212aube/", "ROOT/.\u212aube/config: " + Secret}, Open: ".\u212aube/config", Escapes: true},
		{Name: "deny_fold_invisible", Layout: []string{"ROOT/.e\u200dnv: " + Secret}, Open: ".e\u200dnv", Escapes: true},
		// Issue 14.4: secrets the list missed, one per family.
		{Name: "deny_ssh_sk_key", Layout: []string{"ROOT/id_ed25519_sk: " + Secret}, Open: "id_ed25519_sk", Escapes: true},
		{Name: "deny_envrc", Layout: []string{"ROOT/.envrc: " + Secret}, Open: ".envrc", Escapes: true},
		{Name: "deny_tfstate", Layout: []string{"ROOT/infra/", "ROOT/infra/terraform.tfstate: " + Secret}, Open: "infra/terraform.tfstate", Escapes: true},
		{Name: "deny_cargo_credentials", Layout: []string{"ROOT/.cargo/", "ROOT/.cargo/credentials.toml: " + Secret}, Open: ".cargo/credentials.toml", Escapes: true},
		{Name: "deny_gh_hosts", Layout: []string{"ROOT/.config/gh/", "ROOT/.config/gh/hosts.yml: " + Secret}, Open: ".config/gh/hosts.yml", Escapes: true},
		{Name: "deny_bash_history", Layout: []string{"ROOT/.bash_history: " + Secret}, Open: ".bash_history", Escapes: true},
		{Name: "deny_ppk", Layout: []string{"ROOT/server.ppk: " + Secret}, Open: "server.ppk", Escapes: true},
		{Name: "deny_bare_repo_config", Layout: []string{"ROOT/proj.git/", "ROOT/proj.git/config: " + Secret}, Open: "proj.git/config", Escapes: true},
		{Name: "deny_bare_repo_via_link", Layout: []string{"ROOT/proj.git/", "ROOT/proj.git/config: " + Secret, "ROOT/c => proj.git/config"}, Open: "c", Escapes: true},
		// Issue 33: from one root into another (OTHER, a second root in
		// the two-root runs, an outside folder with one root).
		{Name: "cross_dotdot", Open: "../OTHER/x", Escapes: true},
		{Name: "cross_dotdot_deep", Layout: []string{"ROOT/s/t/"}, Open: "s/t/../../../OTHER/d/y", Escapes: true},
		{Name: "cross_symlink_file_relative", Layout: []string{"ROOT/l => ../OTHER/x"}, Open: "l", Escapes: true},
		{Name: "cross_symlink_file_absolute", Layout: []string{"ROOT/l => ABS/OTHER/x"}, Open: "l", Escapes: true},
		{Name: "cross_symlink_dir_relative", Layout: []string{"ROOT/dl => ../OTHER"}, Open: "dl/x", Escapes: true},
		{Name: "cross_symlink_dir_absolute", Layout: []string{"ROOT/dl => ABS/OTHER/d"}, Open: "dl/y", Escapes: true},
		{Name: "cross_symlink_chain", Layout: []string{"ROOT/a => b", "ROOT/b => ../OTHER/d/y"}, Open: "a", Escapes: true},
		{Name: "cross_symlink_to_parent", Layout: []string{"ROOT/up => .."}, Open: "up/OTHER/x", Escapes: true},
		{Name: "cross_symlink_then_dotdot", Layout: []string{"ROOT/sub/", "ROOT/d => sub"}, Open: "d/../../OTHER/x", Escapes: true},
		{Name: "cross_proc_self_root", Layout: []string{"ROOT/l => /proc/self/root" + "ABS/OTHER/x"}, Open: "l", Escapes: true},
	}
}

// Other is the second root's folder and label in the two-root runs.
const Other = "OTHER"

// BuildTwo lays out c as [Build] does, beside it the second root OTHER,
// and returns the two roots, OTHER first when otherFirst.
func BuildTwo(t testing.TB, c Case, otherFirst bool) []string {
	t.Helper()
	root := Build(t, c)
	other := filepath.Join(filepath.Dir(root), Other)
	if otherFirst {
		return []string{other, root}
	}
	return []string{root, other}
}

// TwoRootName is c.Open as a model names it in the two-root runs: under
// the label ROOT.
func TwoRootName(c Case) string { return "ROOT/" + c.Open }

// Build lays out c under a fresh temp folder and returns the sandbox root
// (an absolute path).
func Build(t testing.TB, c Case) string {
	t.Helper()
	base := t.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	layout := append([]string{
		"ROOT/",
		"outside/",
		"outside/secret: " + Secret,
		"ROOT-evil/",
		"ROOT-evil/x: " + Secret,
		"ROOT/.env: " + Secret,
		"ROOT/.git/",
		"ROOT/.git/config: " + Secret,
		"OTHER/",
		"OTHER/x: " + Secret,
		"OTHER/d/",
		"OTHER/d/y: " + Secret,
	}, c.Layout...)
	for _, e := range layout {
		make1(t, base, e)
	}
	return filepath.Join(base, "ROOT")
}

func make1(t testing.TB, base, e string) {
	t.Helper()
	abs := func(p string) string { return filepath.Join(base, filepath.FromSlash(p)) }
	switch {
	case strings.Contains(e, " => "):
		name, target, _ := strings.Cut(e, " => ")
		target = strings.ReplaceAll(target, "ABS/", filepath.ToSlash(base)+"/")
		if err := os.Symlink(filepath.FromSlash(target), abs(name)); err != nil {
			t.Skipf("cannot create symlink %s: %v", name, err)
		}
	case strings.HasSuffix(e, "/"):
		if err := os.MkdirAll(abs(e), 0o755); err != nil {
			t.Fatal(err)
		}
	case strings.HasSuffix(e, "|"):
		if err := mkfifo(abs(strings.TrimSuffix(e, "|"))); err != nil {
			t.Skipf("cannot create fifo: %v", err)
		}
	default:
		name, content, ok := strings.Cut(e, ": ")
		if !ok {
			content = "content of " + name
		}
		if err := os.WriteFile(abs(name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(content, Secret) {
			if err := os.Chmod(abs(name), SecretMode); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Dirs are roots (as BuildTwo returns them) with the labels
// confine.Labels gives them.
func Dirs(t testing.TB, roots []string) []confine.Dir {
	t.Helper()
	labels, err := confine.Labels(roots)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]confine.Dir, len(roots))
	for i, r := range roots {
		out[i] = confine.Dir{Label: labels[i], Path: r}
	}
	return out
}

// CrossDotDot reports whether c's path leaves ROOT by "..", lexically:
// the guest cleans such a name to the other root's own (ROOT/../OTHER/x
// is OTHER/x, a file it may read), so the engine refuses it before any
// call runs (host/engine), and a run that calls the guest directly
// cannot judge it.
func CrossDotDot(c Case) bool {
	return strings.HasPrefix(path.Clean(TwoRootName(c)), Other+"/")
}
