package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/moatdev/moat/guest/proto"
)

// A cliff is one class of pattern measured against ripgrep and GNU grep:
// count mode unless content is set (then the lines are listed, as the
// model would see them).
type cliff struct {
	class, pat string
	ignoreCase bool
	content    bool
	input      string // a file of the generated inputs, or "" for Go's source tree
}

// cliffClasses are the classes of issue 22: keyword lists, counted
// repetitions to {1000}, a DFA that needs many states, long lines in
// content mode, non-ASCII classes on Latin-1 text.
func cliffClasses() []cliff {
	k100, k300, k1000 := keywords(100), keywords(300), keywords(1000)
	var cs []cliff
	for _, in := range []string{"text.txt", ""} {
		for _, c := range []cliff{
			{class: "many DFA states", pat: `[a-q][^u-z]{13}x`},
			{class: "leading [\\s\\S]*", pat: `[\s\S]*x.{30}y`},
			{class: "(\\w+\\s*){1,500}", pat: `(\w+\s*){1,500}`},
			{class: ".{1000}.{1000}", pat: `.{1000}.{1000}`},
			{class: "(\\pL|\\d){1,1000}x", pat: `(\pL|\d){1,1000}x`},
			{class: "\\w{1,1000}x", pat: `\w{1,1000}x`},
			{class: "100-word list", pat: k100},
			{class: "300-word list", pat: k300},
			{class: "1000-word list", pat: k1000},
			{class: "300-word list in \\b()\\b", pat: `\b(` + k300 + `)\b`},
			{class: "300-word list, ignore case", pat: k300, ignoreCase: true},
		} {
			c.input = in
			cs = append(cs, c)
		}
	}
	return append(cs,
		cliff{class: "(?i)endmark, 10 lines of 5 MB, content", pat: `endmark`, ignoreCase: true, content: true, input: "long.txt"},
		cliff{class: "[^\\x00-\\x7f] on Latin-1 text", pat: `[^\x00-\x7f]`, input: "latin1.txt"})
}

// cliffCap bounds one run of ripgrep or GNU grep in a cliff row: GNU grep
// backtracks for minutes on some counted repetitions in a UTF-8 locale,
// and the row then says only that it took longer.
const cliffCap = 20 * time.Second

// cliffs measures every cliff class whose row name want takes, side by
// side with ripgrep and GNU grep where installed.
func cliffs(tmp, src string, moatArgs func(...string) []string, runs int, want func(string) bool, gnu bool) ([]row, error) {
	var rows []row
	inputs := filepath.Join(tmp, "cliffs")
	made := false
	for _, c := range cliffClasses() {
		where := "50 MB text"
		if c.input == "" {
			where = "Go's src"
		} else if c.input != "text.txt" {
			where = c.input
		}
		name := fmt.Sprintf("cliff: %s (%s)", c.class, where)
		if !want(name) {
			continue
		}
		if !made {
			os.MkdirAll(inputs, 0o755)
			if err := writeInputs(inputs, 50<<20); err != nil {
				return nil, err
			}
			made = true
		}
		fmt.Fprintln(os.Stderr, "moat-bench:", name)
		root, target := src, src
		if c.input != "" {
			root, target = inputs, filepath.Join(inputs, c.input)
		}
		mode, flags := `"output_mode":"count",`, "-c"
		if c.content {
			mode, flags = "", "-n"
		}
		if c.ignoreCase {
			flags = "-i" + flags[1:]
		}
		args := fmt.Sprintf(`{"pattern":%q,"ignore_case":%v,%s"max_results":%d}`, c.pat, c.ignoreCase, mode, proto.MaxMaxResults)
		if c.input != "" {
			args = fmt.Sprintf(`{"pattern":%q,"path":%q,"ignore_case":%v,%s"max_results":%d}`, c.pat, c.input, c.ignoreCase, mode, proto.MaxMaxResults)
		}
		cmds := [][]string{moatArgs("--root", root, "grep", args)}
		names := []string{"moat"}
		if _, err := exec.LookPath("rg"); err == nil {
			// ripgrep refuses programs past its default size limits
			// (the {1,1000} rows): raised, so that it answers.
			cmds, names = append(cmds, []string{"rg", flags, "--no-messages", "--regex-size-limit", "1G", "--dfa-size-limit", "1G", "-e", c.pat, target}), append(names, "ripgrep "+flags)
		}
		if _, err := exec.LookPath("grep"); err == nil && gnu {
			cmds, names = append(cmds, []string{"grep", "-r" + flags[1:], "-E", "-e", c.pat, target}), append(names, "GNU grep -r"+flags[1:]+"E")
		}
		med, err := measureCapped(runs, cmds, cliffCap)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{name + ", moat", ms(med[0]), "", ""})
		for i := 1; i < len(cmds); i++ {
			if med[i] == gaveUp {
				rows = append(rows, row{"  vs " + names[i], ms(med[0]), fmt.Sprintf("over %v", cliffCap), fmt.Sprintf("(stopped; under %.2fx)", ratio(med[0], cliffCap))})
				continue
			}
			if med[i] == 0 {
				rows = append(rows, row{"  vs " + names[i], ms(med[0]), "refused", "(pattern too big for it)"})
				continue
			}
			rows = append(rows, row{"  vs " + names[i], ms(med[0]), ms(med[i]), fmt.Sprintf("%.2fx", ratio(med[0], med[i]))})
		}
		for _, r := range rows[len(rows)-len(cmds):] {
			fmt.Fprintf(os.Stderr, "moat-bench:   %s: %s %s %s\n", r.measure, r.moat, r.other, r.ratio)
		}
	}
	return rows, nil
}
