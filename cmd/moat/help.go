package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/peterbourgon/ff/v3/ffcli"
)

func helpCommand(e *env, root *ffcli.Command) *ffcli.Command {
	return &ffcli.Command{
		Name:       "help",
		ShortUsage: "moat help [COMMAND]",
		ShortHelp:  "explain moat or one of its commands",
		FlagSet:    flag.NewFlagSet("moat help", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) == 0 {
				fmt.Fprintln(e.stdout, helpText(root, helpWidth(e)))
				return nil
			}
			for _, c := range root.Subcommands {
				if c.Name == args[0] {
					fmt.Fprintln(e.stdout, commandHelp(e, c))
					return nil
				}
			}
			return usagef("no command %q; run 'moat help' for the list", args[0])
		},
	}
}

// commandHelp is a command's help and, for one that reads a config file,
// which file that is here.
func commandHelp(e *env, c *ffcli.Command) string {
	width := helpWidth(e)
	text := helpText(c, width)
	if c.FlagSet == nil || c.FlagSet.Lookup("config") == nil {
		return text
	}
	file, why := "", ""
	switch env, def := e.getenv(envName("config")), defaultConfig(); {
	case env != "":
		file, why = env, "named by "+envName("config")+"; --config names another"
	case def == "":
		file, why = "none", "there is no user config folder here; --config or "+envName("config")+" names one"
	case exists(def):
		file, why = def, "the default; --config or "+envName("config")+" names another"
	default:
		file, why = def, "the default, not there now (so none is read); --config or "+envName("config")+" names another"
	}
	return text + "\n\nCONFIG FILE\n  " + file + "\n" + indent(wrapLine(why, width-4), "    ")
}

// Help is wrapped to the terminal, within these bounds: narrower than
// minWidth nothing fits anyway, and prose wider than maxWidth is hard to read.
const (
	defaultWidth = 80
	minWidth     = 40
	maxWidth     = 100
)

// helpWidth is the width help is wrapped to: the terminal's (standard
// output's, else standard error's, since help piped into a pager is still
// read on that terminal), else $COLUMNS, else 80.
func helpWidth(e *env) int {
	w := 0
	for _, out := range []any{e.stdout, e.stderr} {
		if cols, _, ok := terminalSize(out); ok && cols > 0 {
			w = cols
			break
		}
	}
	if w == 0 {
		if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n > 0 {
			w = n
		}
	}
	switch {
	case w == 0:
		return defaultWidth
	case w < minWidth:
		return minWidth
	case w > maxWidth:
		return maxWidth
	}
	return w
}

// helpText is a command's help wrapped to width: what it is for, then its
// subcommands, then its flags with their defaults and the environment
// variable that sets each.
func helpText(c *ffcli.Command, width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "USAGE\n  %s\n\n", c.ShortUsage)
	text := c.LongHelp
	if text == "" {
		text = c.ShortHelp
	}
	if text != "" {
		b.WriteString(wrapText(text, width))
		b.WriteString("\n\n")
	}
	if len(c.Subcommands) > 0 {
		b.WriteString("COMMANDS\n")
		rows := make([][2]string, len(c.Subcommands))
		for i, s := range c.Subcommands {
			rows[i] = [2]string{s.Name, s.ShortHelp}
		}
		writeTable(&b, rows, width)
		b.WriteString("\n")
	}
	var rows [][2]string
	if c.Name != "moat" && c.FlagSet != nil {
		c.FlagSet.VisitAll(func(f *flag.Flag) {
			arg, usage := flag.UnquoteUsage(f)
			name := "--" + f.Name
			if !isBool(f) {
				name += " " + placeholder(f, arg)
			}
			if def := f.DefValue; def != "" && def != "false" && def != "[]" && !strings.Contains(usage, "(default:") {
				usage += " (default " + def + ")"
			}
			rows = append(rows, [2]string{name, usage + " [" + envName(f.Name) + "]"})
		})
	}
	if len(rows) > 0 {
		b.WriteString("FLAGS\n")
		writeTable(&b, rows, width)
	}
	return strings.TrimRight(b.String(), "\n")
}

// placeholder is a flag's argument as help shows it: the back-quoted word
// of its usage (--root FOLDER), DURATION or N by its type, else the last
// word of its name (--cache-dir DIR, --model MODEL).
func placeholder(f *flag.Flag, arg string) string {
	if strings.Contains(f.Usage, "`") {
		return strings.ToUpper(arg)
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "DURATION"
		case int, int64, uint, uint64:
			return "N"
		}
	}
	return strings.ToUpper(f.Name[strings.LastIndex(f.Name, "-")+1:])
}

// writeTable writes two columns, "  left  right", the right one wrapped to
// width. When the left column would leave the right one too narrow, the
// right one goes under the left, indented.
func writeTable(b *strings.Builder, rows [][2]string, width int) {
	left := 0
	for _, r := range rows {
		left = max(left, len(r[0]))
	}
	left = min(left, 26)
	col := 2 + left + 2
	for _, r := range rows {
		if width-col < 30 || len(r[0]) > left {
			fmt.Fprintf(b, "  %s\n", r[0])
			b.WriteString(indent(wrapLine(r[1], width-8), "        "))
			b.WriteString("\n")
			continue
		}
		lines := strings.Split(wrapLine(r[1], width-col), "\n")
		fmt.Fprintf(b, "  %-*s  %s\n", left, r[0], lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(b, "%s%s\n", strings.Repeat(" ", col), l)
		}
	}
}

// wrapText wraps each line of hand-formatted help that is wider than width
// at spaces, continuing with the line's own indentation (under the text of
// a "- " list item), so examples and lists keep their shape and no word is
// broken.
func wrapText(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if cols(l) <= width {
			continue
		}
		text := strings.TrimLeft(l, " ")
		ind := l[:len(l)-len(text)]
		if ind != "" && isCommand(text) {
			continue // an example: broken, it could no longer be pasted
		}
		hang := ind
		switch {
		case strings.HasPrefix(text, "- "):
			hang += "  "
		case strings.Contains(text, " {"):
			// A tool's usage, "grep {pattern, path?, ...}": under the brace.
			hang += strings.Repeat(" ", cols(text[:strings.Index(text, " {")])+2)
		}
		w := wrapLine(text, width-len(hang))
		first, rest, _ := strings.Cut(w, "\n")
		lines[i] = ind + first
		if rest != "" {
			lines[i] += "\n" + indent(rest, hang)
		}
	}
	return strings.Join(lines, "\n")
}

// isCommand tells an example command line in help ("moat tool ...",
// "echo ... | moat ...") from prose.
func isCommand(text string) bool {
	return strings.HasPrefix(text, "moat ") || strings.Contains(text, "| moat ")
}

// wrapLine breaks s at spaces into lines of at most width columns; a word
// longer than width gets a line of its own.
func wrapLine(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		switch {
		case n == 0:
		case n+1+cols(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += cols(w)
	}
	return b.String()
}

// cols is the width of s on a terminal, counting each rune as one column
// (help holds a few arrows and dashes, no wide characters).
func cols(s string) int { return utf8.RuneCountInString(s) }
