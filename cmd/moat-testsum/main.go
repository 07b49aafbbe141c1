// Command moat-testsum reads `go test -json` on standard input and prints
// what `go test` would print without -v: each package's result line, the
// output of failed tests, build errors. At the end it names every failed
// test with its package and every skipped test with its reason, which
// plain `go test` hides. `make test` pipes each of its go test steps
// through it and gathers the endings with -o.
//
// Lines that are not JSON (go test's own messages on standard error,
// merged in with 2>&1) are printed as they come.
//
// Exit status: 1 if a test, a package or a build failed, else 0.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	out := flag.String("o", "", "also append the ending (counts, failures, skips) to this `file`")
	flag.Parse()
	s := newSummary()
	if err := s.read(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "moat-testsum:", err)
		os.Exit(1)
	}
	end := s.ending()
	fmt.Print(end)
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			_, err = io.WriteString(f, end)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "moat-testsum:", err)
			os.Exit(1)
		}
	}
	if s.anyFailed() {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json's TestEvent), with
// the build events of Go 1.24 and later.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output and build-fail
}

// key names one test of one package.
type key struct{ pkg, test string }

// summary is what has been seen so far.
type summary struct {
	output      map[key][]string // a running test's output lines
	okPkgs      int
	failedPkgs  []string // packages that failed, in order
	failedTests []key    // tests that failed, in order
	skipped     []skip
	buildFails  []string
}

type skip struct {
	key
	reason string
}

func newSummary() *summary { return &summary{output: map[key][]string{}} }

// read consumes the stream, writing to w what go test would print.
func (s *summary) read(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20) // a test may print long lines
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil || e.Action == "" {
			fmt.Fprintln(w, line)
			continue
		}
		s.add(e, w)
	}
	return sc.Err()
}

func (s *summary) add(e event, w io.Writer) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		io.WriteString(w, e.Output)
	case "build-fail":
		// "pkg [pkg.test]": the package whose test binary did not build.
		p, _, _ := strings.Cut(e.ImportPath, " ")
		s.buildFails = append(s.buildFails, p)
	case "output":
		if e.Test == "" {
			// The package's own lines: ok/FAIL, and what its test binary
			// printed outside any test (a panic, a timeout).
			if o := e.Output; o != "PASS\n" && o != "FAIL\n" && !strings.HasPrefix(o, "=== ") {
				io.WriteString(w, o)
			}
			return
		}
		s.output[k] = append(s.output[k], e.Output)
		if strings.HasPrefix(e.Test, "Benchmark") && strings.HasPrefix(e.Output, e.Test) {
			io.WriteString(w, e.Output) // a benchmark's result line
		}
	case "pass":
		if e.Test == "" {
			s.okPkgs++
		}
		delete(s.output, k)
	case "fail":
		if e.Test == "" {
			s.failedPkgs = append(s.failedPkgs, e.Package)
			return
		}
		s.failedTests = append(s.failedTests, k)
		io.WriteString(w, strings.Join(s.output[k], ""))
		delete(s.output, k)
	case "skip":
		if e.Test == "" {
			return // a package without tests
		}
		s.skipped = append(s.skipped, skip{k, skipReason(s.output[k])})
		delete(s.output, k)
	}
}

// skipReason is what a skipped test said: its log lines, without the
// framing go test adds (=== RUN, --- SKIP) or the file:line prefix.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if i := strings.Index(t, ".go:"); i > 0 && !strings.Contains(t[:i], " ") {
			if _, rest, ok := strings.Cut(t[i+4:], ": "); ok {
				t = rest
			}
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, "; ")
}

func (s *summary) anyFailed() bool {
	return len(s.failedPkgs) > 0 || len(s.failedTests) > 0 || len(s.buildFails) > 0
}

// ending is the closing block: a count line ("packages: 15 ok, 1 failed;
// tests: 2 failed, 3 skipped"), then one line per failed
// test (the innermost: a test whose subtest failed is not named again),
// per package that failed outside any test, per build failure, and per
// skipped test.
func (s *summary) ending() string {
	var b strings.Builder
	fmt.Fprintf(&b, "packages: %d ok", s.okPkgs)
	if n := len(s.failedPkgs); n > 0 {
		fmt.Fprintf(&b, ", %d failed", n)
	}
	var tests []string
	if n := len(s.innermost()); n > 0 {
		tests = append(tests, fmt.Sprintf("%d failed", n))
	}
	if n := len(s.skipped); n > 0 {
		tests = append(tests, fmt.Sprintf("%d skipped", n))
	}
	if len(tests) > 0 {
		fmt.Fprintf(&b, "; tests: %s", strings.Join(tests, ", "))
	}
	b.WriteString("\n")
	named := map[string]bool{}
	for _, k := range s.innermost() {
		fmt.Fprintf(&b, "  FAIL %s %s\n", k.pkg, k.test)
		named[k.pkg] = true
	}
	for _, p := range s.buildFails {
		fmt.Fprintf(&b, "  FAIL %s (build failed)\n", p)
		named[p] = true
	}
	for _, p := range s.failedPkgs {
		if !named[p] {
			fmt.Fprintf(&b, "  FAIL %s (no test failed: the test binary did; see its output above)\n", p)
		}
	}
	for _, sk := range s.skipped {
		fmt.Fprintf(&b, "  skip %s %s: %s\n", sk.pkg, sk.test, sk.reason)
	}
	return b.String()
}

// innermost is the failed tests without those that failed only because a
// subtest did.
func (s *summary) innermost() []key {
	var out []key
	for _, k := range s.failedTests {
		if !slices.ContainsFunc(s.failedTests, func(o key) bool {
			return o.pkg == k.pkg && strings.HasPrefix(o.test, k.test+"/")
		}) {
			out = append(out, k)
		}
	}
	return out
}
