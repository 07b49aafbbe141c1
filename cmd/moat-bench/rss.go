package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

// grepRSSName is the peak-memory rows' name (-rows).
const grepRSSName = "peak RSS, grep of Go's source tree"

// grepRSSRows measures the peak RSS of one one-shot grep of Go's source
// tree (no hits, count mode, as moat tool runs it by default: isolated
// where the kernel allows, secrets redacted), the same with --redact=false,
// and ripgrep's, the three in turn for runs rounds under /usr/bin/time;
// medians, with each one's median wall time beside it.
func grepRSSRows(moat, cache, src string, runs int, want func(string) bool) ([]row, error) {
	if !want(grepRSSName) {
		return nil, nil
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		fmt.Fprintln(os.Stderr, "moat-bench: /usr/bin/time missing (Debian package time); no", grepRSSName, "rows")
		return nil, nil
	}
	fmt.Fprintln(os.Stderr, "moat-bench:", grepRSSName)
	const args = `{"pattern":"zzqqxx_nohit","output_mode":"count","max_results":2000}`
	cmds := [][]string{
		{moat, "tool", "--cache-dir", cache, "--root", src, "grep", args},
		{moat, "tool", "--redact=false", "--cache-dir", cache, "--root", src, "grep", args},
	}
	names := []string{grepRSSName + ", moat tool", grepRSSName + ", moat tool --redact=false"}
	rg, rgErr := exec.LookPath("rg")
	if rgErr == nil {
		cmds = append(cmds, []string{rg, "-c", "--no-messages", "zzqqxx_nohit", src})
	}
	kbs := make([][]int64, len(cmds))
	walls := make([][]time.Duration, len(cmds))
	for i := range runs + 1 { // round 0 warms the page cache and the compile cache
		for j, c := range cmds {
			kb, wall, err := peakRSS(c)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				kbs[j], walls[j] = append(kbs[j], kb), append(walls[j], wall)
			}
		}
	}
	mib := func(kb int64) string { return fmt.Sprintf("%.0f MiB", float64(kb)/1024) }
	var rows []row
	for j := range names {
		m, w := medianOf(kbs[j]), medianOf(walls[j])
		r := row{names[j], mib(m), "", "moat " + ms(w)}
		if rgErr == nil {
			rk, rw := medianOf(kbs[2]), medianOf(walls[2])
			r.other = mib(rk) + " (ripgrep)"
			r.ratio = fmt.Sprintf("%.1fx; moat %s, rg %s", float64(m)/float64(rk), ms(w), ms(rw))
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// medianOf is the median of xs (not empty).
func medianOf[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
