package gate

import (
	"fmt"
	"strings"
	"testing"
)

func TestLongDiffPaged(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	// 30 rows: a page is 29 lines and the "more" line. y while paging
	// is not taken; Enter pages on; a shows the rest; at the question,
	// a shows everything again (paged), and y at the end writes.
	f := newFixture(t, "y\n\na\na\n"+strings.Repeat("\n", 7)+"y\n")
	f.gate.opt.Reviewer = &Terminal{Open: f.gate.opt.OpenTTY, Size: func(TTY) (int, int) { return 0, 30 }}
	res := f.propose("propose_write", write("big.txt", b.String()))
	screen := f.tty.String()
	if res.IsError {
		t.Fatalf("result %+v\n%s", res, screen)
	}
	more := "-- 24 of 203 diff lines --"
	first := strings.Index(screen, more)
	if first < 0 || strings.Count(screen[:first], "\n") != 29 || !strings.Contains(screen[:first], "+line 20\n") || strings.Contains(screen[:first], "+line 21\n") {
		t.Fatalf("first page wrong:\n%s", screen)
	}
	if !strings.Contains(screen, "moat: 179 more diff lines to see before you can approve") {
		t.Errorf("y while paging was not refused:\n%s", screen)
	}
	q := "Create big.txt? [y]es"
	if n := strings.Count(screen, q); n != 2 {
		t.Errorf("question asked %d times, want 2:\n%s", n, screen)
	}
	last := strings.LastIndex(screen, q)
	// The file and action are repeated just above the question.
	if !strings.HasSuffix(screen[:last], "+line 199\nmoat: create "+f.root+"/big.txt (1690 bytes)\n") {
		t.Errorf("question not preceded by the end of the diff and the summary:\n%s", screen[last-200:])
	}
	if got, _ := f.read("big.txt"); got != b.String() {
		t.Errorf("content differs")
	}
	// No page is taller than the terminal: a "more" line ends each page
	// of 29 lines (the third chunk is "a": all the rest at once).
	for i, page := range strings.Split(screen, " diff lines --") {
		if n := strings.Count(page, "\n"); n > 29 && i != 3 {
			t.Errorf("page %d has %d lines", i, n)
		}
	}
}

func TestHeight(t *testing.T) {
	for _, tc := range []struct {
		cols int
		line string
		want int
	}{
		{80, "", 1}, {80, "short", 1}, {0, strings.Repeat("x", 500), 1},
		{10, strings.Repeat("x", 10), 1}, {10, strings.Repeat("x", 11), 2}, {10, strings.Repeat("é", 25), 3},
		{10, "\tab", 1}, {10, "\tabc", 2}, {10, sgrBold + strings.Repeat("x", 10) + sgrReset, 1},
	} {
		if got := height(tc.cols, tc.line); got != tc.want {
			t.Errorf("height(%d, %q) = %d, want %d", tc.cols, tc.line, got, tc.want)
		}
	}
}

// TestPagesCountWrappedRows: on a narrow terminal long lines take several
// rows, and a page still fits the screen.
func TestPagesCountWrappedRows(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "%03d %s\n", i, strings.Repeat("w", 70)) // 75 columns with the "+": 2 rows at 40
	}
	f := newFixture(t, strings.Repeat("\n", 10)+"n\n")
	f.gate.opt.Reviewer = &Terminal{Open: f.gate.opt.OpenTTY, Size: func(TTY) (int, int) { return 40, 20 }}
	f.propose("propose_write", write("w.txt", b.String()))
	screen := f.tty.String()
	pages := strings.Split(screen, " diff lines --")
	if len(pages) < 4 {
		t.Fatalf("%d pages:\n%s", len(pages), screen)
	}
	for i, p := range pages[1 : len(pages)-1] {
		// After the "more" prompt of the previous page: its rest, then
		// this page's lines, each 1 or 2 rows; the last is the prompt.
		rows := height(40, strings.Split(p, "\n")[1:]...) - 1
		if rows > 19 {
			t.Errorf("page %d takes %d rows (of 20, with the more line):\n%s", i+1, rows, p)
		}
	}
}

// q, as in any pager, leaves: while paging and at the question it is no,
// and nothing is written.
func TestPagerQuits(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	for _, input := range []string{"q\n", "\nquit\n", "a\nq\n"} {
		f := newFixture(t, input)
		f.gate.opt.Reviewer = &Terminal{Open: f.gate.opt.OpenTTY, Size: func(TTY) (int, int) { return 0, 30 }}
		res := f.propose("propose_write", write("big.txt", b.String()))
		screen := f.tty.String()
		if res.Written || !strings.Contains(screen, "moat: not written.") || strings.Contains(screen, "moat: answer") {
			t.Errorf("%q: %+v\n%s", input, res, screen[max(0, len(screen)-300):])
		}
		if _, ok := f.read("big.txt"); ok {
			t.Errorf("%q: the file was written", input)
		}
	}
}
