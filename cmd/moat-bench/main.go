// Command moat-bench prints moat's performance table: every row measured
// side by side with what a user would run instead, in one run, as medians
// over several runs, with ratios. `make bench` runs it.
//
// It builds moat into a temporary folder, so it measures the code in this
// checkout. GNU grep and ripgrep are compared when installed (the Makefile
// installs them from Debian's packages).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/fanout"
	"github.com/moatdev/moat/host/runner"
)

func main() {
	runner.SpareProc(os.Getenv) // as moat does: the session rows run guests in this process
	os.Exit(run())
}

type sample struct {
	wall time.Duration
}

// measureSide runs every command once per round, in turn, for n rounds
// (after one warm-up round) and returns each one's median. A command that
// fails on its warm-up (isolation unavailable, say) is dropped: its median
// is 0.
func measureSide(n int, cmds [][]string) ([]time.Duration, error) {
	return measureCapped(n, cmds, 0)
}

// gaveUp is the median measureCapped gives a command that outran its cap.
const gaveUp = time.Duration(-1)

// measureCapped is measureSide with a cap on each run of the commands
// after the first (the one measured): a comparison that outruns it (GNU
// grep backtracking on a counted repetition for minutes) is stopped and
// its median is gaveUp. A cap of 0 is none.
func measureCapped(n int, cmds [][]string, limit time.Duration) ([]time.Duration, error) {
	walls := make([][]time.Duration, len(cmds))
	ok := make([]bool, len(cmds))
	over := make([]bool, len(cmds))
	run := func(i int) (sample, error) {
		if i == 0 || limit <= 0 {
			return once("", cmds[i])
		}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		s, err := onceCtx(ctx, "", cmds[i])
		if ctx.Err() != nil {
			over[i] = true
		}
		return s, err
	}
	for i := range cmds {
		_, err := run(i)
		ok[i] = err == nil
		if i == 0 && err != nil {
			return nil, err
		}
	}
	for range n {
		for i := range cmds {
			if !ok[i] {
				continue
			}
			s, err := run(i)
			if over[i] {
				ok[i] = false
				continue
			}
			if err != nil {
				return nil, err
			}
			walls[i] = append(walls[i], s.wall)
		}
	}
	med := make([]time.Duration, len(cmds))
	for i, w := range walls {
		switch {
		case over[i]:
			med[i] = gaveUp
		case len(w) > 0:
			slices.Sort(w)
			med[i] = w[len(w)/2]
		}
	}
	return med, nil
}

func once(stdin string, argv []string) (sample, error) {
	return onceCtx(context.Background(), stdin, argv)
}

// onceCtx is once, the command killed when ctx ends.
func onceCtx(ctx context.Context, stdin string, argv []string) (sample, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t)
	var ee *exec.ExitError
	// grep exits 1 for "no match": that is a result, not a failure. moat
	// tool exits 1 when the tool answered an error, which would time the
	// error, not the search (time(1) runs moat for the memory rows, where
	// a refusal is the answer being measured).
	moatErr := filepath.Base(argv[0]) == "moat" && err != nil
	if err != nil && (moatErr || !(errors.As(err, &ee) && ee.ExitCode() == 1)) {
		return sample{}, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	return sample{wall: wall}, nil
}

// peakRSS runs argv under /usr/bin/time and returns its peak RSS in KiB.
// The rusage Go's exec reports is no good here: the child is started with
// vfork, so its high-water mark includes this (much larger) process.
func peakRSS(argv []string) (int64, time.Duration, error) {
	f, err := os.CreateTemp("", "moat-rss-")
	if err != nil {
		return 0, 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	s, err := once("", append([]string{"/usr/bin/time", "-f", "%M", "-o", f.Name()}, argv...))
	if err != nil {
		return 0, 0, err
	}
	// time(1) writes "Command exited with non-zero status N" first when the
	// tool reports an error (exit 1); the figure is the last line.
	b, _ := os.ReadFile(f.Name())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var kb int64
	fmt.Sscan(lines[len(lines)-1], &kb)
	return kb, s.wall, nil
}

type row struct {
	measure, moat, other string
	ratio                string
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func run() int {
	runs := flag.Int("runs", 7, "runs per measurement (the median is reported)")
	treeDir := flag.String("tree", filepath.Join(os.TempDir(), "moat-bench-tree"), "where the generated monorepo-sized tree is made and kept between runs (delete it when done)")
	treeScale := flag.Float64("tree-scale", 1, "size of the generated tree: 1 is 200,000 source files and a folder of 100,000 empty files; 0.05 runs quickly")
	only := flag.String("rows", "", "measure only the rows whose name matches this regexp (default: all; the rows after the grep rows run when it matches \"one-shot latency, per-call overhead, memory\")")
	baseMoat := flag.String("base-moat", "", "a moat `binary` (the build before a change) to time beside this checkout's in the mcp per-call rows")
	noGNU := flag.Bool("no-gnu-grep", false, "leave GNU grep out of the cliff and session rows (it takes tens of seconds on some)")
	flag.Parse()
	rowRE, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "moat-bench: -rows:", err)
		return 1
	}
	want := func(name string) bool { return rowRE.MatchString(name) }
	tmp, err := os.MkdirTemp("", "moat-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	moat := filepath.Join(tmp, "moat")
	build := exec.Command("go", "build", "-o", moat, "./cmd/moat")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "moat-bench: building moat:", err)
		return 1
	}
	cache := filepath.Join(tmp, "cache")
	goroot := strings.TrimSpace(output("go", "env", "GOROOT"))
	src := filepath.Join(goroot, "src")
	var rows []row
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "moat-bench:", err); return 1 }
	moatArgs := func(extra ...string) []string {
		return append([]string{moat, "tool", "--isolate", "off", "--cache-dir", cache}, extra...)
	}
	fmt.Fprintf(os.Stderr, "moat-bench: %d runs per row, %s, %d CPUs\n", *runs, runtime.Version(), runtime.NumCPU())

	// 1. grep over GOROOT/src: a full scan for each class of pattern (see
	// guest/match), and a search with many hits stopped at the default cap.
	// A full scan counts the matching lines of every file (moat's count
	// mode, rg -c, grep -c): with thousands of hits a listing of lines
	// would stop at moat's output cap, and time printing, not searching.
	for _, c := range []struct {
		name, pat  string
		ignoreCase bool
		capped     bool // moat's default max_results; the others piped to head
		native     bool // also the guest's tool code run natively
	}{
		{"grep full scan (no hits)", "zzqqxx_nohit", false, false, true},
		{"grep literal, few hits", "func NewReplacer", false, false, true},
		{"grep case-insensitive literal", "todo", true, false, false},
		{"grep alternation", `(Fatalf|Skipf)\(`, false, false, false},
		{"grep class only", `[0-9]{4}-[0-9]{2}-[0-9]{2}`, false, false, false},
		{"grep many hits, capped at 100", `err`, false, true, false},
	} {
		if !want(c.name) {
			continue
		}
		fmt.Fprintln(os.Stderr, "moat-bench:", c.name)
		args := fmt.Sprintf(`{"pattern":%q,"ignore_case":%v,"output_mode":"count","max_results":%d}`, c.pat, c.ignoreCase, proto.MaxMaxResults)
		flags := "-c"
		if c.capped {
			args = fmt.Sprintf(`{"pattern":%q,"ignore_case":%v}`, c.pat, c.ignoreCase)
			flags = "-n"
		}
		if c.ignoreCase {
			flags = "-i" + flags[1:]
		}
		// The same search as a user would type it; capped searches stop
		// at the first 100 lines, as moat does.
		other := func(argv ...string) []string {
			if !c.capped {
				return argv
			}
			return []string{"sh", "-c", shellJoin(argv) + " | head -n 100"}
		}
		// Every command of a row runs once per round, in turn, so that the
		// machine's slow moments fall on all of them alike.
		cmds := [][]string{
			moatArgs("--root", src, "grep", args),
			{moat, "tool", "--isolate", "require", "--cache-dir", cache, "--root", src, "grep", args},
		}
		names := []string{"moat (isolate off)", "moat (isolated)"}
		if _, err := exec.LookPath("grep"); err == nil {
			cmds, names = append(cmds, other("grep", "-r"+flags[1:], "-E", "-e", c.pat, src)), append(names, "GNU grep -r"+flags[1:]+"E")
		}
		if _, err := exec.LookPath("rg"); err == nil {
			cmds, names = append(cmds, other("rg", flags, "--no-messages", "-e", c.pat, src)), append(names, "ripgrep "+flags)
		}
		med, err := measureSide(*runs, cmds)
		if err != nil {
			return fail(err)
		}
		m := med[0]
		rows = append(rows, row{c.name + ", moat (isolate off)", ms(m), "", ""})
		if med[1] > 0 {
			rows = append(rows, row{c.name + ", moat (isolated)", ms(med[1]), "", ""})
		}
		for i := 2; i < len(cmds); i++ {
			rows = append(rows, row{"  vs " + names[i], ms(m), ms(med[i]), fmt.Sprintf("%.2fx", ratio(m, med[i]))})
		}
		if c.native {
			nat := nativeGrep(src, c.pat, *runs)
			rows = append(rows, row{"  vs the same tool code, native Go", ms(m), ms(nat), fmt.Sprintf("%.2fx", ratio(m, nat))})
		}
		if !c.capped && len(cmds) > 2 {
			// The same search in guests that are already up, as the model's
			// own searches run (ask, chat, mcp), beside the same others.
			in, others, err := sessionGrep(src, cache, c.pat, c.ignoreCase, *runs, cmds[2:])
			if err != nil {
				return fail(err)
			}
			rows = append(rows, row{c.name + ", in a session (ask, chat, mcp)", ms(in), "", ""})
			for i, o := range others {
				rows = append(rows, row{"  vs " + names[i+2], ms(in), ms(o), fmt.Sprintf("%.2fx", ratio(in, o))})
			}
		}
	}

	// 1b. The cliffs: a row per class of pattern that once cost 50-1000x
	// ripgrep (guest/match), on generated text and on Go's source tree.
	cliffRows, err := cliffs(tmp, src, moatArgs, *runs, want, !*noGNU)
	if err != nil {
		return fail(err)
	}
	rows = append(rows, cliffRows...)

	// 1b'. The classes of many hits, long answers, folded letters and
	// keyword lists, in a session beside ripgrep (-rows 'session: ').
	sess, err := sessionRows(tmp, src, cache, *runs, want, !*noGNU)
	if err != nil {
		return fail(err)
	}
	rows = append(rows, sess...)

	// 1c. A generated monorepo-sized tree (-rows 'generated tree' alone).
	if want("generated tree") {
		scale, err := scaleRows(moat, cache, *treeDir, *treeScale, *runs)
		if err != nil {
			return fail(err)
		}
		rows = append(rows, scale...)
	}
	// 1d. read_file and stat through moat mcp beside mark3labs's server,
	// and the peak memory of a grep of Go's source tree (-rows 'mcp per
	// call|peak RSS, grep of Go').
	mcpR, err := mcpRows(tmp, moat, *baseMoat, cache, want)
	if err != nil {
		return fail(err)
	}
	rows = append(rows, mcpR...)
	rss, err := grepRSSRows(moat, cache, src, *runs, want)
	if err != nil {
		return fail(err)
	}
	rows = append(rows, rss...)
	if !want("one-shot latency, per-call overhead, memory") {
		printRows(rows)
		return 0
	}

	// 2. One-shot latency.
	fmt.Fprintln(os.Stderr, "moat-bench: one-shot latency")
	small := filepath.Join(tmp, "small")
	os.MkdirAll(filepath.Join(small, "src"), 0o755)
	os.WriteFile(filepath.Join(small, "a.txt"), []byte("hello\n"), 0o644)
	ls := []string{"--root", small, "list_dir", `{"path":"."}`}
	one, err := measureSide(*runs*3, [][]string{
		{moat, "--version"},
		moatArgs(ls...),
		append([]string{moat, "tool", "--isolate", "require", "--cache-dir", cache}, ls...),
	})
	if err != nil {
		return fail(err)
	}
	ver, warm, warmIso := sample{one[0]}, sample{one[1]}, sample{one[2]}
	var cold []time.Duration
	for i := 0; i < 3; i++ {
		d := filepath.Join(tmp, fmt.Sprintf("cold%d", i))
		s, err := once("", append([]string{moat, "tool", "--isolate", "off", "--cache-dir", d}, ls...))
		if err != nil {
			return fail(err)
		}
		cold = append(cold, s.wall)
	}
	slices.Sort(cold)
	rows = append(rows,
		row{"moat --version (bare process start)", ms(ver.wall), "", ""},
		row{"one-shot moat tool list_dir, warm cache", ms(warm.wall), ms(ver.wall), fmt.Sprintf("%.1fx --version", ratio(warm.wall, ver.wall))},
		row{"one-shot moat tool list_dir, first run (no cache)", ms(cold[1]), ms(warm.wall), fmt.Sprintf("%.1fx warm", ratio(cold[1], warm.wall))})
	if warmIso.wall > 0 {
		rows = append(rows, row{"isolated session start (one-shot, --isolate require)", ms(warmIso.wall), ms(warm.wall), fmt.Sprintf("+%s", ms(warmIso.wall-warm.wall))})
	}

	// 3. Per call inside one session.
	fmt.Fprintln(os.Stderr, "moat-bench: per-call overhead")
	inSession, native, err := perCall(small, cache)
	if err != nil {
		return fail(err)
	}
	rows = append(rows, row{"per call in a session (list_dir, persistent guest)", ms(inSession), ms(native), fmt.Sprintf("+%s over native", ms(inSession-native))})

	// 4. Peak RSS on big files.
	fmt.Fprintln(os.Stderr, "moat-bench: memory")
	big := filepath.Join(tmp, "big")
	os.MkdirAll(big, 0o755)
	sp, _ := os.Create(filepath.Join(big, "sparse.img"))
	sp.Truncate(4 << 30)
	sp.Close()
	text := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789\n", (100<<20)/55)
	os.WriteFile(filepath.Join(big, "text.txt"), []byte(text), 0o644)
	text = ""
	settle()
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		fmt.Fprintln(os.Stderr, "moat-bench: /usr/bin/time missing (Debian package time); no memory rows")
	} else {
		base, _, err := peakRSS(moatArgs("--root", big, "stat", `{"path":"."}`))
		if err != nil {
			return fail(err)
		}
		for _, c := range []struct{ name, tool, args string }{
			{"peak RSS, read_file 4 GiB sparse file", "read_file", `{"path":"sparse.img"}`},
			{"peak RSS, grep 4 GiB sparse file", "grep", `{"pattern":"x","path":"sparse.img"}`},
			{"peak RSS, read_file 100 MB text file", "read_file", `{"path":"text.txt"}`},
			{"peak RSS, grep 100 MB text file (no hits)", "grep", `{"pattern":"zzqqxx","path":"text.txt"}`},
		} {
			kb, wall, err := peakRSS(moatArgs("--root", big, c.tool, c.args))
			if err != nil {
				return fail(err)
			}
			rows = append(rows, row{c.name, fmt.Sprintf("%.0f MiB", float64(kb)/1024), fmt.Sprintf("%.0f MiB (stat of a folder)", float64(base)/1024), ms(wall)})
		}
	}

	printRows(rows)
	return 0
}

// printRows writes the table.
func printRows(rows []row) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "| measure\t| moat\t| compared with\t| ratio / note\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---\t|---\t|")
	for _, r := range rows {
		fmt.Fprintf(tw, "| %s\t| %s\t| %s\t| %s\t|\n", r.measure, r.moat, r.other, r.ratio)
	}
	tw.Flush()
}

// shellJoin quotes argv for sh -c.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func output(name string, args ...string) string {
	b, _ := exec.Command(name, args...).Output()
	return string(b)
}

// nativeGrep runs the guest's tool code natively on os.DirFS: the floor the
// sandbox is measured against.
func nativeGrep(root, pat string, runs int) time.Duration {
	args := []byte(fmt.Sprintf(`{"pattern":%q,"output_mode":"count","max_results":%d}`, pat, proto.MaxMaxResults))
	fsys := os.DirFS(root)
	var ds []time.Duration
	tools.Run(fsys, proto.Request{ID: 1, Tool: proto.Grep, Args: args})
	for i := 0; i < runs; i++ {
		t := time.Now()
		tools.Run(fsys, proto.Request{ID: 1, Tool: proto.Grep, Args: args})
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// sessionGrep times a full-scan grep as ask, chat and mcp run it: in
// guests that are already up (the fan-out over one per core, as isolate
// wires it), so the module load of a one-shot call is not in it. Each
// round runs the session grep and the other command in turn.
func sessionGrep(root, cache, pat string, ignoreCase bool, runs int, others [][]string) (time.Duration, []time.Duration, error) {
	args := fmt.Sprintf(`{"pattern":%q,"ignore_case":%v,"output_mode":"count","max_results":%d}`, pat, ignoreCase, proto.MaxMaxResults)
	return sessionCall(root, cache, proto.Grep, args, runs, others)
}

// sessionCall times one tool call in guests that are already up, as
// sessionGrep does, beside the other commands. The guests read each
// file's redacted view, as moat's do (runner.Config's default); the
// warm-up round is the one that finds in every file.
func sessionCall(root, cache, tool, callArgs string, runs int, others [][]string) (time.Duration, []time.Duration, error) {
	ctx := context.Background()
	r, err := runner.New(ctx, runner.Config{Root: root, Resolver: confine.Auto, CacheDir: cache})
	if err != nil {
		return 0, nil, err
	}
	ex := fanout.New(r, r.Parallel())
	defer ex.Close()
	args := []byte(callArgs)
	in := []time.Duration{}
	walls := make([][]time.Duration, len(others))
	for i := 0; i <= runs; i++ { // round 0 warms up
		t := time.Now()
		resp, err := ex.Exec(ctx, proto.Request{ID: uint64(i + 1), Tool: tool, Args: args})
		if err != nil || resp.IsError {
			return 0, nil, fmt.Errorf("%s in a session: %v %s", tool, err, resp.Text)
		}
		d := time.Since(t)
		for j, o := range others {
			s, err := once("", o)
			if err != nil {
				return 0, nil, err
			}
			if i > 0 {
				walls[j] = append(walls[j], s.wall)
			}
		}
		if i > 0 {
			in = append(in, d)
		}
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	meds := make([]time.Duration, len(others))
	for j := range walls {
		meds[j] = med(walls[j])
	}
	return med(in), meds, nil
}

// perCall measures one list_dir through a persistent guest against the
// same tool code called natively.
func perCall(root, cache string) (time.Duration, time.Duration, error) {
	ctx := context.Background()
	r, err := runner.New(ctx, runner.Config{Root: root, Resolver: confine.Auto, CacheDir: cache})
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	args := []byte(`{"path":"."}`)
	const n = 2000
	if _, err := r.Exec(ctx, proto.Request{ID: 1, Tool: proto.ListDir, Args: args}); err != nil {
		return 0, 0, err
	}
	t := time.Now()
	for i := 0; i < n; i++ {
		if _, err := r.Exec(ctx, proto.Request{ID: uint64(i + 2), Tool: proto.ListDir, Args: args}); err != nil {
			return 0, 0, err
		}
	}
	in := time.Since(t) / n
	fsys := os.DirFS(root)
	t = time.Now()
	for i := 0; i < n; i++ {
		tools.Run(fsys, proto.Request{ID: 1, Tool: proto.ListDir, Args: args})
	}
	return in, time.Since(t) / n, nil
}
