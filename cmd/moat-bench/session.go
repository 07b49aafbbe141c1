package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/limits"
)

// A sessionClass is a grep measured as the model's own calls run (in
// guests already up, through the engine, the answer's lines redacted as
// moat's are), beside ripgrep on the same search: the classes of issue
// 34, several patterns each.
type sessionClass struct {
	class, pat string
	ignoreCase bool
	content    bool   // lines listed (max_results 2000; ripgrep's first 2000 lines), else counts
	path       string // under Go's source tree, "" for all of it
	json       bool   // over one line of 50 MB of minified JSON (jsonLine), not Go's source tree
	heavy      bool   // over a tree one folder of which holds half its bytes (writeHeavyTree)
}

func sessionClasses() []sessionClass {
	k3, k10 := keywords(3000), keywords(10000)
	return []sessionClass{
		{class: "content, 2000 hits", pat: `.*`, content: true},
		{class: "content, 2000 hits", pat: `err`, content: true},
		{class: "content, 2000 hits", pat: `\bfunc\b`, content: true},
		{class: "content, hex class", pat: `[0-9a-f]{40}`, content: true},
		{class: "content, hex class", pat: `0x[0-9a-fA-F]{8,}`, content: true},
		{class: "content, counted class", pat: `\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b`, content: true},
		{class: "content, counted class", pat: `[A-Z_]{12,}`, content: true},
		{class: "content, counted class", pat: `\\x[0-9a-f]{2}`, content: true},
		{class: "count, every line", pat: `^`, path: "runtime"},
		{class: "count, every line", pat: `$`, path: "runtime"},
		{class: "count, every line", pat: `.?`, path: "runtime"},
		{class: "count, folded letters", pat: `(?i)traße`},
		{class: "count, folded letters", pat: `(?i)kelvin`},
		{class: "count, folded letters", pat: `(?i)assess`},
		{class: "count, keyword list", pat: k3},
		{class: "count, keyword list", pat: k10},
		{class: "count, keyword list", pat: k10, ignoreCase: true},
		{class: "count, one 50 MB line", pat: `"sha":"[0-9a-f]{40}"`, json: true},
		{class: "count, one 50 MB line", pat: `"id":[0-9]+,"last":true`, json: true},
		{class: "count, one 50 MB line", pat: `"name":"[A-Z][a-z]+ [A-Z][a-z]+[0-9]{3}"`, json: true},
		{class: "content, one 50 MB line", pat: `"sha":"[0-9a-f]{40}"`, json: true, content: true},
		{class: "content, one 50 MB line", pat: `"id":[0-9]+,"last":true`, json: true, content: true},
		{class: "count, one heavy folder", pat: `#nohit#`, heavy: true},
		{class: "content, one heavy folder", pat: `#needle#`, heavy: true, content: true},
	}
}

// sessionName is a class's row name: its class and a short form of its pattern.
func (c sessionClass) name() string {
	p := c.pat
	if n := strings.Count(p, "|") + 1; n > 1 {
		p = fmt.Sprintf("%d words", n)
	}
	if c.ignoreCase {
		p += ", ignore case"
	}
	if c.path != "" {
		p += " in " + c.path
	}
	if c.json {
		p += " in " + jsonFile
	}
	if c.heavy {
		p += " in " + heavyDir
	}
	return fmt.Sprintf("session: %s, %s", c.class, p)
}

// sessionRows measures every session class whose row name want takes:
// each round one call in the session and one run of each comparison
// (ripgrep; for content rows ripgrep asked for moat's answer too; GNU
// grep when gnu), in turn, after a first call (the one that finds the
// secrets of every file it reads) that is not counted; medians, with the
// range of the session's calls.
func sessionRows(tmp, src, cache string, runs int, want func(string) bool, gnu bool) ([]row, error) {
	var rows []row
	engines := map[string]*engine.Engine{} // by root
	rg, rgErr := exec.LookPath("rg")
	grep, grepErr := exec.LookPath("grep")
	for _, c := range sessionClasses() {
		name := c.name()
		if !want(name) {
			continue
		}
		root := src
		switch {
		case c.json:
			root = filepath.Join(tmp, "json")
			if err := writeJSONLine(root); err != nil {
				return nil, err
			}
		case c.heavy:
			root = filepath.Join(tmp, heavyDir)
			if err := writeHeavyTree(root); err != nil {
				return nil, err
			}
		}
		e := engines[root]
		if e == nil {
			// The session as moat opens it (host/assembly), in this process.
			lim := limits.Defaults()
			lim.Isolate = "off"
			sb, err := assembly.Open(context.Background(), assembly.Options{Roots: []string{root}, CacheDir: cache, Limits: lim})
			if err != nil {
				return nil, err
			}
			defer sb.Close()
			e = sb.Engine
			engines[root] = e
		}
		fmt.Fprintln(os.Stderr, "moat-bench:", name)
		a := map[string]any{"pattern": c.pat, "ignore_case": c.ignoreCase, "max_results": proto.MaxMaxResults}
		flags := []string{"-c"}
		if c.content {
			flags = []string{"-n"}
		} else {
			a["output_mode"] = proto.GrepCount
		}
		if c.ignoreCase {
			flags = append(flags, "-i")
		}
		target := root
		if c.path != "" {
			a["path"] = c.path
			target = filepath.Join(src, c.path)
		}
		args, _ := json.Marshal(a)
		var others []comparison
		if rgErr == nil {
			// ripgrep's own size limits raised, so that it takes the lists.
			argv := append([]string{rg, "--no-messages", "--regex-size-limit", "1G", "--dfa-size-limit", "1G"}, flags...)
			argv = append(argv, "-e", c.pat, target)
			if c.content {
				// The first 2000 lines ripgrep's threads find, from
				// whichever files they reach first; and moat's answer,
				// the first 2000 in walk order (--sort path, which makes
				// ripgrep search on one thread).
				sorted := append(slices.Clone(argv[:1]), append([]string{"--sort", "path"}, argv[1:]...)...)
				others = append(others, comparison{name: "ripgrep " + strings.Join(flags, " "), argv: headed(argv)},
					comparison{name: "ripgrep --sort path (the same 2000 lines)", argv: headed(sorted)})
			} else {
				others = append(others, comparison{name: "ripgrep " + strings.Join(flags, " "), argv: argv})
			}
		}
		if grepErr == nil && gnu {
			// GNU grep with Perl syntax, the nearest to RE2's ((?i), \b,
			// classes); it reads every file, ignored or not, and answers
			// lines in the order it walks.
			letters := "r" + strings.ReplaceAll(strings.Join(flags, ""), "-", "") + "P"
			argv := []string{grep, "-" + letters, "-e", c.pat, target}
			if c.content {
				argv = headed(argv)
			}
			others = append(others, comparison{name: "GNU grep -" + letters, argv: argv, capped: true})
		}
		in, lo, hi, o, refused, err := sessionEngineCall(e, args, runs, others)
		if err != nil {
			return nil, err
		}
		if refused != "" {
			rows = append(rows, row{name, "refused", "", refused})
			continue
		}
		rng := fmt.Sprintf("%s (%s-%s)", ms(in), ms(lo), ms(hi))
		if len(others) == 0 {
			rows = append(rows, row{name, rng, "", ""})
		}
		for i, c := range others {
			n := "  vs " + c.name
			if i == 0 {
				n = name + ", vs " + c.name
			}
			switch o[i] {
			case gaveUp:
				rows = append(rows, row{n, rng, fmt.Sprintf("over %v", sessionCap), fmt.Sprintf("under %.2fx", ratio(in, sessionCap))})
			case 0:
				rows = append(rows, row{n, rng, "failed", "(it refused the pattern)"})
			default:
				rows = append(rows, row{n, rng, ms(o[i]), fmt.Sprintf("%.2fx", ratio(in, o[i]))})
			}
		}
		for _, r := range rows[len(rows)-max(len(others), 1):] {
			fmt.Fprintf(os.Stderr, "moat-bench:   %s %s %s\n", r.moat, r.other, r.ratio)
		}
	}
	return rows, nil
}

// A comparison is a command timed beside a session row. A capped one
// (GNU grep, which backtracks on some patterns and refuses others) is
// stopped at sessionCap and may fail; ripgrep's may not.
type comparison struct {
	name   string
	argv   []string
	capped bool
}

// sessionCap bounds each run of a capped comparison.
const sessionCap = 20 * time.Second

// headed is argv's output cut at the first 2000 lines, as moat's content
// rows ask for.
func headed(argv []string) []string {
	return []string{"sh", "-c", shellJoin(argv) + " | head -n 2000"}
}

// sessionEngineCall times one grep through e beside each of others, in
// turn, for runs rounds after one not counted: the session call's median,
// fastest and slowest, and each other's median (gaveUp for a capped one
// that outran its cap, 0 for one that failed); or the error it answered
// (a pattern refused), the first 120 bytes of it.
func sessionEngineCall(e *engine.Engine, args []byte, runs int, others []comparison) (med, lo, hi time.Duration, otherMed []time.Duration, refused string, err error) {
	ctx := context.Background()
	var in []time.Duration
	out := make([][]time.Duration, len(others))
	dropped := make([]time.Duration, len(others)) // gaveUp or failed (0), once it is
	done := make([]bool, len(others))
	for i := 0; i <= runs; i++ {
		t := time.Now()
		res := e.Call(ctx, proto.Grep, args)
		d := time.Since(t)
		if res.IsError {
			return 0, 0, 0, nil, res.Text[:min(len(res.Text), 120)], nil
		}
		for k, c := range others {
			if done[k] {
				continue
			}
			if !c.capped {
				s, err := once("", c.argv)
				if err != nil {
					return 0, 0, 0, nil, "", err
				}
				if i > 0 {
					out[k] = append(out[k], s.wall)
				}
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, sessionCap)
			s, err := onceCtx(cctx, "", c.argv)
			over := cctx.Err() != nil
			cancel()
			switch {
			case over:
				done[k], dropped[k] = true, gaveUp
			case err != nil:
				done[k] = true
			case i > 0:
				out[k] = append(out[k], s.wall)
			}
		}
		if i > 0 {
			in = append(in, d)
		}
	}
	slices.Sort(in)
	for k, o := range out {
		if done[k] {
			otherMed = append(otherMed, dropped[k])
			continue
		}
		slices.Sort(o)
		otherMed = append(otherMed, o[len(o)/2])
	}
	return in[len(in)/2], in[0], in[len(in)-1], otherMed, "", nil
}
