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
	return fmt.Sprintf("session: %s, %s", c.class, p)
}

// sessionRows measures every session class whose row name want takes:
// each round one call in the session and one ripgrep run, in turn, after
// a first call (the one that finds the secrets of every file it reads)
// that is not counted; medians, with the range of the session's calls.
func sessionRows(tmp, src, cache string, runs int, want func(string) bool) ([]row, error) {
	var rows []row
	engines := map[string]*engine.Engine{} // by root
	rg, rgErr := exec.LookPath("rg")
	for _, c := range sessionClasses() {
		name := c.name()
		if !want(name) {
			continue
		}
		root := src
		if c.json {
			root = filepath.Join(tmp, "json")
			if err := writeJSONLine(root); err != nil {
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
		var others [][]string
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
				others = [][]string{{"sh", "-c", shellJoin(argv) + " | head -n 2000"}, {"sh", "-c", shellJoin(sorted) + " | head -n 2000"}}
			} else {
				others = [][]string{argv}
			}
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
		switch len(o) {
		case 0:
			rows = append(rows, row{name, rng, "", ""})
		case 2:
			rows = append(rows, row{name + ", vs ripgrep " + strings.Join(flags, " "), rng, ms(o[0]), fmt.Sprintf("%.2fx", ratio(in, o[0]))},
				row{"  vs ripgrep --sort path (the same 2000 lines)", rng, ms(o[1]), fmt.Sprintf("%.2fx", ratio(in, o[1]))})
		default:
			rows = append(rows, row{name + ", vs ripgrep " + strings.Join(flags, " "), rng, ms(o[0]), fmt.Sprintf("%.2fx", ratio(in, o[0]))})
		}
		for _, r := range rows[len(rows)-max(len(o), 1):] {
			fmt.Fprintf(os.Stderr, "moat-bench:   %s %s %s\n", r.moat, r.other, r.ratio)
		}
	}
	return rows, nil
}

// sessionEngineCall times one grep through e beside each of others, in
// turn, for runs rounds after one not counted: the session call's median,
// fastest and slowest, and each other's median; or the error it answered
// (a pattern refused), the first 120 bytes of it.
func sessionEngineCall(e *engine.Engine, args []byte, runs int, others [][]string) (med, lo, hi time.Duration, otherMed []time.Duration, refused string, err error) {
	ctx := context.Background()
	var in []time.Duration
	out := make([][]time.Duration, len(others))
	for i := 0; i <= runs; i++ {
		t := time.Now()
		res := e.Call(ctx, proto.Grep, args)
		d := time.Since(t)
		if res.IsError {
			return 0, 0, 0, nil, res.Text[:min(len(res.Text), 120)], nil
		}
		for k, other := range others {
			s, err := once("", other)
			if err != nil {
				return 0, 0, 0, nil, "", err
			}
			if i > 0 {
				out[k] = append(out[k], s.wall)
			}
		}
		if i > 0 {
			in = append(in, d)
		}
	}
	slices.Sort(in)
	for _, o := range out {
		slices.Sort(o)
		otherMed = append(otherMed, o[len(o)/2])
	}
	return in[len(in)/2], in[0], in[len(in)-1], otherMed, "", nil
}
