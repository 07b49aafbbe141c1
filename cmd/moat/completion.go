package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/guest/proto"
)

// completionCommand prints a shell completion script, made from the
// command tree itself, so it never lists a command or flag moat lacks.
func completionCommand(e *env, root *ffcli.Command) *ffcli.Command {
	return &ffcli.Command{
		Name:       "completion",
		ShortUsage: "moat completion bash|zsh|fish",
		ShortHelp:  "print a shell completion script",
		LongHelp: `Prints a completion script for the shell named: commands, each command's
flags, tool names after 'moat tool', command names after 'moat help', and
file or folder names after the flags that take them.

  bash:  eval "$(moat completion bash)"     (in ~/.bashrc)
  zsh:   eval "$(moat completion zsh)"      (in ~/.zshrc)
  fish:  moat completion fish > ~/.config/fish/completions/moat.fish`,
		FlagSet: flag.NewFlagSet("moat completion", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return usagef("completion needs the shell: moat completion bash, zsh or fish")
			}
			switch args[0] {
			case "bash":
				writeBash(e.stdout, root)
			case "zsh":
				io.WriteString(e.stdout, "# zsh completion for moat, through bash's: eval \"$(moat completion zsh)\"\nautoload -U +X bashcompinit && bashcompinit\n")
				writeBash(e.stdout, root)
			case "fish":
				writeFish(e.stdout, root)
			default:
				return usagef("completion: no script for %q; moat completion bash, zsh or fish", args[0])
			}
			return nil
		},
	}
}

// pathFlags are the flags, of any command, whose value is a file or (dirs)
// a folder.
func pathFlags(root *ffcli.Command) (files, dirs []string) {
	seen := map[string]bool{}
	for _, c := range root.Subcommands {
		c.FlagSet.VisitAll(func(f *flag.Flag) {
			if seen[f.Name] || !isPathFlag(f) {
				return
			}
			seen[f.Name] = true
			if arg, _ := flag.UnquoteUsage(f); arg == "folder" {
				dirs = append(dirs, "--"+f.Name)
			} else {
				files = append(files, "--"+f.Name)
			}
		})
	}
	sort.Strings(files)
	sort.Strings(dirs)
	return files, dirs
}

func flagNames(c *ffcli.Command) []string {
	var out []string
	c.FlagSet.VisitAll(func(f *flag.Flag) { out = append(out, "--"+f.Name) })
	return out
}

func commandNames(root *ffcli.Command) []string {
	var out []string
	for _, c := range root.Subcommands {
		out = append(out, c.Name)
	}
	return out
}

func writeBash(w io.Writer, root *ffcli.Command) {
	files, dirs := pathFlags(root)
	fmt.Fprintf(w, `# bash completion for moat: eval "$(moat completion bash)"
_moat() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]} flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur")); return
  fi
  case "$prev" in
    %s) COMPREPLY=($(compgen -d -- "$cur")); return;;
    %s) COMPREPLY=($(compgen -f -- "$cur")); return;;
  esac
  case "$cmd" in
`, strings.Join(commandNames(root), " "), strings.Join(dirs, "|"), strings.Join(files, "|"))
	for _, c := range root.Subcommands {
		fmt.Fprintf(w, "    %s) flags=\"%s\";;\n", c.Name, strings.Join(flagNames(c), " "))
	}
	fmt.Fprintf(w, `  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur")); return
  fi
  case "$cmd" in
    tool) COMPREPLY=($(compgen -W "%s" -- "$cur"));;
    help) COMPREPLY=($(compgen -W "%s" -- "$cur"));;
    completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"));;
  esac
}
complete -o default -F _moat moat
`, strings.Join(proto.Tools(), " "), strings.Join(commandNames(root), " "))
}

func writeFish(w io.Writer, root *ffcli.Command) {
	files, dirs := pathFlags(root)
	io.WriteString(w, "# fish completion for moat: moat completion fish > ~/.config/fish/completions/moat.fish\ncomplete -c moat -f\n")
	for _, c := range root.Subcommands {
		fmt.Fprintf(w, "complete -c moat -n __fish_use_subcommand -a %s -d %s\n", c.Name, fishQuote(c.ShortHelp))
		c.FlagSet.VisitAll(func(f *flag.Flag) {
			_, usage := flag.UnquoteUsage(f)
			opt := ""
			switch {
			case contains(dirs, "--"+f.Name):
				opt = " -r -a '(__fish_complete_directories)'"
			case contains(files, "--"+f.Name):
				opt = " -r -F"
			case !isBool(f):
				opt = " -r"
			}
			fmt.Fprintf(w, "complete -c moat -n '__fish_seen_subcommand_from %s' -l %s%s -d %s\n", c.Name, f.Name, opt, fishQuote(firstSentence(usage)))
		})
	}
	fmt.Fprintf(w, "complete -c moat -n '__fish_seen_subcommand_from tool' -a '%s'\n", strings.Join(proto.Tools(), " "))
	fmt.Fprintf(w, "complete -c moat -n '__fish_seen_subcommand_from help' -a '%s'\n", strings.Join(commandNames(root), " "))
	io.WriteString(w, "complete -c moat -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
}

func fishQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
