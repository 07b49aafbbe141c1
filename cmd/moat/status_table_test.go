package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// statusTable reads the README's table of exit statuses: for each status,
// the commands that use it ("every command" for all of them).
func statusTable(t *testing.T) map[int]string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Exit statuses\n")
	if !ok {
		t.Fatal("README.md has no section \"## Exit statuses\"")
	}
	rows := map[int]string{}
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue // the header and its rule
		}
		rows[n] = cells[3]
	}
	return rows
}

// The README's table of exit statuses is the one every command follows:
// every status moat's code defines is a row of it, and every status a
// command's help names is a row that lists that command.
func TestStatusTable(t *testing.T) {
	rows := statusTable(t)
	for _, code := range []int{exitOK, exitFailure, exitUsage, exitTurnCap, exitNoIsolat, exitInterrupt} {
		if _, ok := rows[code]; !ok {
			t.Errorf("exit status %d is not in README.md's table", code)
		}
	}
	e := &env{getenv: func(string) string { return "" }}
	number := regexp.MustCompile(`\b[0-9]+\b`)
	checked := 0
	for _, c := range rootCommand(e).Subcommands {
		_, para, ok := strings.Cut(c.LongHelp, "Exit status")
		if !ok {
			continue
		}
		para, _, _ = strings.Cut(para, "\n\n")
		para = regexp.MustCompile(`--[a-z-]+`).ReplaceAllString(para, "") // --max-turns, not a status
		checked++
		var seen []int
		for _, m := range number.FindAllString(para, -1) {
			n, _ := strconv.Atoi(m)
			seen = append(seen, n)
			cmds, ok := rows[n]
			switch {
			case !ok:
				t.Errorf("moat help %s names exit status %d, which README.md's table does not have", c.Name, n)
			case !strings.Contains(cmds, "every command") && !strings.Contains(cmds, "`"+c.Name+"`"):
				t.Errorf("moat help %s names exit status %d, whose row in README.md's table does not list %s (it lists %s)", c.Name, n, c.Name, strings.TrimSpace(cmds))
			}
		}
		for _, want := range []int{exitOK, exitUsage} {
			if !slices.Contains(seen, want) {
				t.Errorf("moat help %s's exit statuses leave out %d", c.Name, want)
			}
		}
	}
	if checked < 5 {
		t.Errorf("found the exit statuses of %d commands' help, want ask, chat, tool, mcp, doctor and replay", checked)
	}
}
