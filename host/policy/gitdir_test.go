package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitDir: issue 18.2. A folder becomes a repository by what git checks
// (HEAD, objects/, refs/, or HEAD and commondir), under any name, and the
// write that completes one is caught as well as writes into one.
func TestGitDir(t *testing.T) {
	cases := []struct {
		disk  []string // what exists
		write string
		want  string // the git directory, "" for none
	}{
		{nil, "x/HEAD", ""},
		{[]string{"x/HEAD"}, "x/objects/info/.keep", ""},
		{[]string{"x/HEAD", "x/objects"}, "x/refs/heads/.keep", "x"},
		{[]string{"x/objects", "x/refs"}, "x/HEAD", "x"},
		{[]string{"x/objects", "x/refs"}, "x/head", "x"}, // a case-insensitive file system's HEAD
		{[]string{"x/HEAD", "x/refs"}, "x/objects/info/.keep", "x"},
		{[]string{"x/HEAD", "x/objects", "x/refs"}, "x/config", "x"},
		{[]string{"x/HEAD", "x/objects", "x/refs"}, "x/hooks/post-checkout", "x"},
		{[]string{"x/HEAD", "x/objects", "x/refs"}, "x/notes.txt", "x"},
		{[]string{"x/HEAD"}, "x/commondir", "x"},
		{[]string{"HEAD", "objects"}, "refs/heads/main", "."},
		{[]string{"a/b/HEAD", "a/b/objects", "a/b/refs"}, "a/b/c/d.txt", "a/b"},
		{[]string{"x/HEAD", "x/objects", "x/refs"}, "y/config", ""},
		{[]string{"x/objects", "x/refs"}, "x/src/HEAD", ""},
		{[]string{"src/objects", "src/refs"}, "src/objects/user.go", ""},
	}
	for _, c := range cases {
		disk := map[string]bool{}
		for _, d := range c.disk {
			disk[d] = true
		}
		got, ok := GitDir(c.write, func(p string) bool { return disk[p] })
		if got != c.want || ok != (c.want != "") {
			t.Errorf("disk %v, write %s: GitDir = %q, %v; want %q", c.disk, c.write, got, ok, c.want)
		}
	}
}

// TestGitConfigCommand: every family of command-setting keys, in the
// spellings git accepts, and files git reads as config that set none, or
// that git rejects before it could run anything.
func TestGitConfigCommand(t *testing.T) {
	yes := map[string]string{
		"[core]\n\tfsmonitor = touch /tmp/pwned\n":          "core.fsmonitor",
		"[core] fsmonitor = x\n":                            "core.fsmonitor",
		"[CORE]\r\n  FSMonitor=x\r\n":                       "core.fsmonitor",
		"\ufeff[core]\nhooksPath = h\n":                     "core.hookspath",
		"# c\n; c\n[core]\n\tsshCommand = \"ssh -o x\"\n":   "core.sshcommand",
		"[core]\neditor\n":                                  "core.editor",
		"[pager]\n\tlog = less\n":                           "pager.log",
		"[alias]\n\tst = !sh -c x\n":                        "alias.st",
		"[alias]\n\tst = \" !sh\"\n":                        "alias.st",
		"[filter \"lfs\"]\n\tclean = x\n":                   "filter.lfs.clean",
		"[filter \"A B\"]\n\tsmudge = x\n":                  "filter.a b.smudge",
		"[filter.x]\n\tprocess = x\n":                       "filter.x.process",
		"[diff \"pdf\"]\n\ttextconv = x\n":                  "diff.pdf.textconv",
		"[diff]\n\texternal = x\n":                          "diff.external",
		"[credential]\n\thelper = x\n":                      "credential.helper",
		"[include]\n\tpath = other\n":                       "include.path",
		"[includeIf \"gitdir:x\"]\n\tpath = other\n":        "includeif.gitdir:x.path",
		"[submodule \"s\"]\n\tupdate = !x\n":                "submodule.s.update",
		"[protocol \"ext\"]\n\tallow = always\n":            "protocol.ext.allow",
		"[user]\n\tname = a\n[gpg]\n\tprogram = x\n":        "gpg.program",
		"[alias]\n\tx = a \\\n[core]\n\ty = !z\n":           "alias.y", // the header is part of x's value
		"[core]\n\tx = \"a;b\" ; c\n\tpager = less # no\n":  "core.pager",
		"[core]\n\tfsmonitor = \"a\\\"b\"\n":                "core.fsmonitor",
		"[remote \"origin\"]\n\tuploadpack = x\n":           "remote.origin.uploadpack",
		"[sequence]\n\teditor = x\n[x]\n\ty = 1\n":          "sequence.editor",
		"[hook \"h\"]\n\tcommand = x\n":                     "hook.h.command",
		"[core]\n\tbare = false\n\tfsmonitor = true\n[x]\n": "core.fsmonitor",
		"Title\n[core]\nfsmonitor = touch pwned\n":          "core.fsmonitor", // git reads a key before any section, and goes on
	}
	for in, want := range yes {
		if got, ok := GitConfigCommand([]byte(in)); !ok || got != want {
			t.Errorf("GitConfigCommand(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	no := []string{
		"", "[core]\n\tbare = false\n", "[alias]\n\tst = status\n", "[submodule \"s\"]\n\tupdate = rebase\n",
		"# [core]\n# fsmonitor = x\n", "[user]\n\tname = \"a # [core] fsmonitor = x\"\n",
		"fsmonitor = x\n", // no section: git reads the key "fsmonitor", not core's
		"Some prose first.\n[core]\nfsmonitor = x\n", // a bad line before it: git rejects the file
		"[core\nfsmonitor = x\n", "[alias]\n\tst = \"!x\n[core]\nfsmonitor=x\n",
		"package main\n\nfunc main() {}\n", "# Title\n\nText with [core] and fsmonitor = x.\n",
	}
	for _, in := range no {
		if got, ok := GitConfigCommand([]byte(in)); ok {
			t.Errorf("GitConfigCommand(%q) = %q, want none", in, got)
		}
	}
}

// TestGitConfigParserAgreesWithGit holds the port to git itself: the keys
// it reports are the keys `git config --list` reads, and a file git
// rejects stops it before any key git would not read.
func TestGitConfigParserAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	inputs := []string{
		"[core] editor = x\n[alias]\n\tx = a \\\n[core]\n\ty = !z\n",
		"[CORE]\r\n  FSMonitor=x\r\n[Filter \"LFS\"]\n clean = \"a;b\" ; c\n",
		"[a.B]\n\tc\n[d \"e\\\"f\"]\n\tg-h = 1 # x\n",
		"; c\n# d\n[x]\n\ty = \"  two  words \"\n\tz = a\\tb\\\\\n",
		"[core]\n\tx = 1\nbad line\n[core]\n\ty = 2\n",
		"[core]\n\tx = \"open\n[core]\n\ty = 2\n",
	}
	dir := t.TempDir()
	for i, in := range inputs {
		f := filepath.Join(dir, "c")
		if err := os.WriteFile(f, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "--file", f, "--list", "--name-only")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.Output()
		var want []string
		if err == nil {
			want = strings.Fields(strings.ToLower(string(out)))
		}
		var got []string
		p := gitConfigParser{s: in}
		p.parse(func(name, _ string, _ bool) bool { got = append(got, name); return true })
		if err != nil {
			// git rejects the file: the port may have read keys before
			// the bad line, never after it.
			if strings.Contains(strings.Join(got, " "), "core.y") {
				t.Errorf("input %d: git rejects it, the port read on past the bad line: %v", i, got)
			}
			continue
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("input %d: port read %v, git read %v", i, got, want)
		}
	}
}

// An alias that passes git options changing its configuration or naming a
// program is refused like a "!" alias (git runs "alias.st = -c
// core.fsmonitor=CMD status" and so CMD), and so are the keys other
// programs read from git's config to run (Git LFS's transfer agents and
// extensions); ordinary aliases stay allowed.
func TestGitAliasOptions(t *testing.T) {
	for _, v := range []string{
		"-c core.fsmonitor=\\\"touch pwned\\\" status", "\"-c\" core.fsmonitor=x status", "-ccore.fsmonitor=x status",
		"--config-env=core.fsmonitor=X status", "--config-env core.pager=X log", "--exec-path=/tmp/x status",
		"-C /tmp/evil status", "--git-dir=evil.git status", "--work-tree=.. status",
		"config core.fsmonitor x", "rebase -x 'make test'", "rebase --exec=x", "difftool --extcmd=x",
		"difftool -xx", "bisect run ./x", "submodule foreach x", "filter-branch --tree-filter x",
		"fetch --upload-pack=x", "push --receive-pack=x", "grep -Ox foo", "grep --open-files-in-pager=x foo",
		"instaweb", "daemon",
	} {
		in := "[alias]\n\tst = " + v + "\n"
		if got, ok := GitConfigCommand([]byte(in)); !ok || got != "alias.st" {
			t.Errorf("GitConfigCommand(%q) = %q, %v; want alias.st", in, got, ok)
		}
	}
	for in, want := range map[string]string{
		"[lfs \"customtransfer.x\"]\n\tpath = ./x\n":  "lfs.customtransfer.x.path",
		"[lfs \"customtransfer.x\"]\n\targs = -e x\n": "lfs.customtransfer.x.args",
		"[lfs]\n\tstandalonetransferagent = x\n":      "lfs.standalonetransferagent",
		"[lfs \"extension.foo\"]\n\tclean = x %f\n":   "lfs.extension.foo.clean",
		"[lfs \"extension.foo\"]\n\tsmudge = x %f\n":  "lfs.extension.foo.smudge",
		"[secrets]\n\tproviders = x\n":                "secrets.providers",
		"[help]\n\tbrowser = x\n":                     "help.browser",
	} {
		if got, ok := GitConfigCommand([]byte(in)); !ok || got != want {
			t.Errorf("GitConfigCommand(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, v := range []string{"status", "log --oneline -n 10", "commit -v", "checkout -b", "rebase -i", "diff --cached", "ci -m x", "add -u"} {
		in := "[alias]\n\tst = " + v + "\n"
		if got, ok := GitConfigCommand([]byte(in)); ok {
			t.Errorf("GitConfigCommand(%q) = %q, want none", in, got)
		}
	}
	if _, ok := GitConfigCommand([]byte("[lfs]\n\turl = https://x\n")); ok {
		t.Error("lfs.url refused")
	}
}
