package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/moatdev/moat/guest/proto"
)

// A monorepo-sized tree for the scale rows: small source files spread
// over folders the way a large repository spreads them, and one folder of
// empty files (a cache, a generated-assets folder) as wide as they come.
// At scale 1 it is 200,000 source files (200 top folders of 10 folders of
// 100 files, about 1 KiB each) and 100,000 empty files in "wide".
const (
	treeTop, treeSub, treeFiles = 200, 10, 100
	treeWide                    = 100_000
)

// genTree makes the tree under dir at the given scale (0 < scale <= 1: the
// number of top folders and of wide entries shrink with it) unless a
// marker says a tree of that scale is there already: making 300,000 files
// takes a while, so the tree is kept between runs (delete dir when done).
// It returns the number of source files and of wide entries.
func genTree(dir string, scale float64) (files, wide int, err error) {
	top := max(1, int(treeTop*scale))
	wide = max(1, int(treeWide*scale))
	files = top * treeSub * treeFiles
	marker := filepath.Join(dir, ".moat-bench-tree")
	want := fmt.Sprintf("%d %d\n", top, wide)
	if b, err := os.ReadFile(marker); err == nil && string(b) == want {
		return files, wide, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return 0, 0, err
	}
	for t := range top {
		for s := range treeSub {
			d := filepath.Join(dir, "src", fmt.Sprintf("pkg%03d", t), fmt.Sprintf("mod%d", s))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return 0, 0, err
			}
			for f := range treeFiles {
				if err := os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(f)+".go"), sourceFile(t, s, f), 0o644); err != nil {
					return 0, 0, err
				}
			}
		}
	}
	w := filepath.Join(dir, "wide")
	if err := os.MkdirAll(w, 0o755); err != nil {
		return 0, 0, err
	}
	for i := range wide {
		f, err := os.Create(filepath.Join(w, fmt.Sprintf("e%06d", i)))
		if err != nil {
			return 0, 0, err
		}
		f.Close()
	}
	if err := os.WriteFile(marker, []byte(want), 0o644); err != nil {
		return 0, 0, err
	}
	settle()
	return files, wide, nil
}

// sourceFile is about 1 KiB of Go-looking text, different per file.
func sourceFile(t, s, f int) []byte {
	b := fmt.Appendf(nil, "// Package mod%d is generated for moat-bench.\npackage mod%d\n\nimport \"fmt\"\n\n", s, s)
	for i := range 8 {
		b = fmt.Appendf(b, "// Func%d_%d returns a value of file %d/%d/%d.\nfunc Func%d_%d(x int) int {\n\tif x > %d {\n\t\tfmt.Println(\"large\", x)\n\t}\n\treturn x * %d\n}\n\n", f, i, t, s, f, f, i, i*7+f, t+i)
	}
	return b
}

// scaleRows measures grep, glob and list_dir on the generated tree beside
// GNU grep -r, rg --files -g and ls -f, and moat's peak RSS for the grep.
func scaleRows(moat, cache, dir string, scale float64, runs int) ([]row, error) {
	fmt.Fprintln(os.Stderr, "moat-bench: generated tree", dir)
	files, wide, err := genTree(dir, scale)
	if err != nil {
		return nil, fmt.Errorf("generating the tree: %w", err)
	}
	tag := fmt.Sprintf(" (%d files + %d in one folder)", files, wide)
	moatArgs := func(extra ...string) []string {
		return append([]string{moat, "tool", "--isolate", "off", "--cache-dir", cache, "--root", dir}, extra...)
	}
	grepArgs := fmt.Sprintf(`{"pattern":"zzqqxx_nohit","output_mode":"count","max_results":%d}`, proto.MaxMaxResults)
	globArgs, listArgs := `{"pattern":"**/f0*.go"}`, `{"path":"wide"}`
	have := func(name string) bool { _, err := exec.LookPath(name); return err == nil }
	var rows []row
	for _, c := range []struct {
		name  string
		moat  []string
		other map[string][]string
	}{
		{"grep tree, no hits" + tag, moatArgs("grep", grepArgs),
			map[string][]string{"GNU grep -r": {"grep", "-r", "zzqqxx_nohit", dir}, "ripgrep -c": {"rg", "-c", "--no-messages", "zzqqxx_nohit", dir}}},
		{"glob **/f0*.go" + tag, moatArgs("glob", globArgs),
			map[string][]string{"rg --files -g": {"rg", "--files", "-g", "**/f0*.go", dir}}},
		{fmt.Sprintf("list_dir of %d entries", wide), moatArgs("list_dir", listArgs),
			map[string][]string{"ls -f": {"ls", "-f", filepath.Join(dir, "wide")}}},
	} {
		fmt.Fprintln(os.Stderr, "moat-bench:", c.name)
		cmds, names := [][]string{c.moat}, []string{""}
		for _, n := range slices.Sorted(maps.Keys(c.other)) {
			if have(c.other[n][0]) {
				cmds, names = append(cmds, c.other[n]), append(names, n)
			}
		}
		med, err := measureSide(runs, cmds)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{c.name + ", moat (isolate off)", ms(med[0]), "", ""})
		for i := 1; i < len(cmds); i++ {
			rows = append(rows, row{"  vs " + names[i], ms(med[0]), ms(med[i]), fmt.Sprintf("%.2fx", ratio(med[0], med[i]))})
		}
	}
	// The same calls in a session (ask, chat, mcp): guests already up, so
	// without the module load every one-shot call pays.
	for _, c := range []struct {
		name, tool, args string
		other            []string
		otherName        string
	}{
		{"grep tree, no hits, in a session", proto.Grep, grepArgs, []string{"grep", "-r", "zzqqxx_nohit", dir}, "GNU grep -r"},
		{"glob **/f0*.go, in a session", proto.Glob, globArgs, []string{"rg", "--files", "-g", "**/f0*.go", dir}, "rg --files -g"},
		{fmt.Sprintf("list_dir of %d entries, in a session", wide), proto.ListDir, listArgs, []string{"ls", "-f", filepath.Join(dir, "wide")}, "ls -f"},
	} {
		if !have(c.other[0]) {
			continue
		}
		fmt.Fprintln(os.Stderr, "moat-bench:", c.name)
		in, others, err := sessionCall(dir, cache, c.tool, c.args, runs, [][]string{c.other})
		if err != nil {
			return nil, err
		}
		rows = append(rows, row{c.name + ", vs " + c.otherName, ms(in), ms(others[0]), fmt.Sprintf("%.2fx", ratio(in, others[0]))})
	}
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		for _, c := range []struct {
			name  string
			argv  []string
			other []string
		}{
			{"peak RSS, grep tree (no hits)", moatArgs("grep", `{"pattern":"zzqqxx_nohit","output_mode":"count"}`), []string{"grep", "-r", "zzqqxx_nohit", dir}},
			{"peak RSS, glob **/f0*.go", moatArgs("glob", `{"pattern":"**/f0*.go"}`), []string{"rg", "--files", "-g", "**/f0*.go", dir}},
		} {
			kb, _, err := peakRSS(c.argv)
			if err != nil {
				return nil, err
			}
			other := ""
			if have(c.other[0]) {
				if okb, _, err := peakRSS(c.other); err == nil {
					other = fmt.Sprintf("%.0f MiB (%s)", float64(okb)/1024, c.other[0])
				}
			}
			rows = append(rows, row{c.name, fmt.Sprintf("%.0f MiB", float64(kb)/1024), other, ""})
		}
	}
	return rows, nil
}
