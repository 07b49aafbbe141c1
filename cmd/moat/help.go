package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/peterbourgon/ff/v3/ffcli"
)

func helpCommand(e *env, root *ffcli.Command) *ffcli.Command {
	fs := flag.NewFlagSet("moat help", flag.ContinueOnError)
	return &ffcli.Command{
		Name:       "help",
		ShortUsage: "moat help [COMMAND]",
		ShortHelp:  "explain moat or one of its commands",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) == 0 {
				fmt.Fprintln(e.stdout, usageFunc(root))
				return nil
			}
			for _, c := range root.Subcommands {
				if c.Name == args[0] {
					fmt.Fprintln(e.stdout, usageFunc(c))
					return nil
				}
			}
			return usagef("no command %q; run 'moat help' for the list", args[0])
		},
	}
}

// usageFunc prints a command's help: what it is for, then its flags with
// their defaults and the environment variable that sets each.
func usageFunc(c *ffcli.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "USAGE\n  %s\n\n", c.ShortUsage)
	if c.LongHelp != "" {
		fmt.Fprintf(&b, "%s\n\n", c.LongHelp)
	} else if c.ShortHelp != "" {
		fmt.Fprintf(&b, "%s\n\n", c.ShortHelp)
	}
	if len(c.Subcommands) > 0 {
		b.WriteString("COMMANDS\n")
		tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
		for _, s := range c.Subcommands {
			fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.ShortHelp)
		}
		tw.Flush()
		b.WriteString("\n")
	}
	if c.FlagSet != nil {
		n := 0
		c.FlagSet.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			b.WriteString("FLAGS\n")
			tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
			c.FlagSet.VisitAll(func(f *flag.Flag) {
				def := f.DefValue
				if def != "" && def != "false" && def != "[]" {
					def = " (default " + def + ")"
				} else {
					def = ""
				}
				envName := "MOAT_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
				fmt.Fprintf(tw, "  --%s\t%s%s\t[%s]\n", f.Name, f.Usage, def, envName)
			})
			tw.Flush()
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
