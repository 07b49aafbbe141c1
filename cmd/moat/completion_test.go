package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// The bash script, run by bash, completes commands, flags, tool names and
// the shells; zsh's is bash's through bashcompinit; fish's names every
// command and flag.
func TestCompletion(t *testing.T) {
	script := func(shell string) string {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		if code := exitCode(dispatch(context.Background(), e, rootCommand(e), []string{"completion", shell}), &errb); code != 0 {
			t.Fatalf("completion %s: exit %d: %s", shell, code, errb.String())
		}
		return out.String()
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the script")
	}
	bash := script("bash")
	for words, want := range map[string]string{
		"moat to":             "tool",
		"moat tool --ro":      "--root",
		"moat ask --num":      "--num-ctx",
		"moat tool li":        "list_dir",
		"moat help do":        "doctor",
		"moat completion fi":  "fish",
		"moat mcp --approve-": "--approve-timeout",
	} {
		cmd := exec.Command("bash", "-c", bash+`
COMP_WORDS=(`+words+`); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _moat; echo "${COMPREPLY[*]}"`)
		got, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("%q: got %q (%v), want %q", words, got, err, want)
		}
	}
	if z := script("zsh"); !strings.Contains(z, "bashcompinit") || !strings.Contains(z, bash) {
		t.Errorf("zsh script is not bash's through bashcompinit:\n%s", z)
	}
	fish := script("fish")
	for _, want := range []string{
		"complete -c moat -n __fish_use_subcommand -a chat -d 'talk with a model about the folder'",
		"complete -c moat -n '__fish_seen_subcommand_from tool' -l root -r -a '(__fish_complete_directories)'",
		"complete -c moat -n '__fish_seen_subcommand_from mcp' -l log -r -F",
	} {
		if !strings.Contains(fish, want) {
			t.Errorf("fish script lacks %q", want)
		}
	}
	var errb bytes.Buffer
	e := &env{stdout: &bytes.Buffer{}, stderr: &errb, getenv: func(string) string { return "" }}
	if code := exitCode(dispatch(context.Background(), e, rootCommand(e), []string{"completion", "tcsh"}), &errb); code != exitUsage {
		t.Errorf("an unknown shell: exit %d", code)
	}
}

// Every help page fits 80 columns, examples included (they are not
// wrapped, so that they can be pasted).
func TestHelpFits80Columns(t *testing.T) {
	e := &env{getenv: func(string) string { return "" }}
	root := rootCommand(e)
	for _, c := range append([]*ffcli.Command{root}, root.Subcommands...) {
		for i, l := range strings.Split(commandHelp(e, c), "\n") {
			if n := cols(l); n > 80 {
				t.Errorf("moat help %s, line %d: %d columns: %s", c.Name, i+1, n, l)
			}
		}
	}
}
