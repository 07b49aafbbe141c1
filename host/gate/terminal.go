package gate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/moatdev/moat/host/display"
)

// DefaultRows and DefaultCols are the terminal size assumed when neither
// the terminal nor $LINES and $COLUMNS say (what less assumes too).
const (
	DefaultRows = 24
	DefaultCols = 80
)

// Terminal is the [Reviewer] at the controlling terminal: it writes the
// change to /dev/tty, a page at a time when it does not fit, and reads the
// answer from there, never from stdin, so a pipe can neither answer the
// question nor hide it.
//
// A diff taller than the terminal is paged: each page ends in a "more"
// line (Enter for the next page, a for the rest at once, n, q or r to
// decline at once). "y" is taken only after the last line of the diff was shown.
// The question is preceded by the file and action in one line (and the
// warning, for a file that runs code), so what is being decided is on the
// screen when the person decides, however long the diff.
//
// Every key typed before a question (or a "more" line) was on the screen
// is discarded first (tcflush TCIFLUSH, and what was read ahead), so only
// a person who has seen it answers; see KeepTypedAhead.
//
// Answers at the question: y or yes writes; n, no, q or Enter alone declines;
// r declines and asks for one line to tell the model why (or "r why"
// inline); a shows the whole change again. Anything else asks again. End
// of input is no answer; the context ending is an interruption.
type Terminal struct {
	// Open opens the terminal for one review; nil opens /dev/tty. An error
	// means there is no one to ask.
	Open func() (TTY, error)
	// Color paints the pager and the question (the gate paints the change).
	Color bool
	// Size returns the terminal's width and height; nil asks the
	// terminal, then $COLUMNS and $LINES, then assumes [DefaultCols] and
	// [DefaultRows]. A width of 0 counts every line as one row.
	Size func(TTY) (cols, rows int)
	// KeepTypedAhead leaves the keys typed before a question to answer
	// it, as testscript's ttyin types all its input before the command
	// starts; only moat's own test suite sets it (MOAT_TEST_TYPEAHEAD).
	// Otherwise each question first discards them (see flushInput).
	KeepTypedAhead bool
}

// Review implements [Reviewer].
func (t *Terminal) Review(ctx context.Context, r *Review) Verdict {
	open := t.Open
	if open == nil {
		open = openTTY
	}
	tty, err := open()
	if err != nil {
		if errors.Is(err, ErrNoTerminal) {
			return Verdict{Outcome: Unavailable, Reason: "there is no terminal to ask the user (moat asks on /dev/tty and this session has none)"}
		}
		return Verdict{Outcome: Unavailable, Reason: fmt.Sprintf("the user cannot be asked (%s)", display.Line(err.Error()))}
	}
	defer tty.Close()
	size := t.Size
	if size == nil {
		size = terminalSize
	}
	cols, rows := size(tty)
	s := &ttySession{
		ctx: ctx, r: r, sc: screen{color: t.Color},
		w: bufio.NewWriter(tty), in: bufio.NewReader(tty),
		rows: max(rows, 8), cols: cols,
	}
	if !t.KeepTypedAhead {
		s.flush = func() bool { return flushInput(tty) }
	}
	v := s.run()
	if err := s.w.Flush(); err != nil && v.Outcome == Approved {
		return Verdict{Outcome: Failed, Reason: "could not write to the terminal: " + display.Line(err.Error())}
	}
	return v
}

// Report implements [Reporter]: one line on the terminal after the write.
func (t *Terminal) Report(_ *Review, msg string) {
	open := t.Open
	if open == nil {
		open = openTTY
	}
	tty, err := open()
	if err != nil {
		return
	}
	defer tty.Close()
	io.WriteString(tty, msg+"\n")
}

// terminalSize is the size of tty, or $COLUMNS and $LINES where the
// terminal does not say (a fresh pseudo-terminal reports 0x0), or the
// defaults.
func terminalSize(tty TTY) (cols, rows int) {
	if f, ok := tty.(*os.File); ok {
		// Through SyscallConn, not f.Fd(): Fd puts the descriptor in
		// blocking mode, and then closing it does not end a pending read,
		// which would take the next line typed at chat's prompt after a
		// question was interrupted with Ctrl-C.
		if rc, err := f.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { cols, rows, _ = term.GetSize(int(fd)) })
		}
	}
	env := func(name string, have, def int) int {
		if have > 0 {
			return have
		}
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
			return n
		}
		return def
	}
	return env("COLUMNS", cols, DefaultCols), env("LINES", rows, DefaultRows)
}

// height is how many terminal rows lines take, wrapped at cols: each rune
// one column (wide characters are rare in diffs; a tab up to the next
// multiple of 8), the gate's own colour sequences none.
func height(cols int, lines ...string) int {
	n := 0
	for _, l := range lines {
		if cols <= 0 {
			n++
			continue
		}
		w := 0
		for i := 0; i < len(l); {
			if l[i] == 0x1b { // an SGR sequence of the gate's own: ESC [ ... m
				j := strings.IndexByte(l[i:], 'm')
				if j < 0 {
					break
				}
				i += j + 1
				continue
			}
			r, size := utf8.DecodeRuneInString(l[i:])
			if r == '\t' {
				w += 8 - w%8
			} else {
				w++
			}
			i += size
		}
		n += max(1, (w+cols-1)/cols)
	}
	return n
}

// ttySession is one review on the terminal.
type ttySession struct {
	ctx  context.Context
	r    *Review
	sc   screen
	w    *bufio.Writer
	in   *bufio.Reader
	rows int
	cols int // 0: unknown, every line one row
	// flush discards what was typed at the terminal before the question
	// was shown (see flushInput); false when tty is no terminal.
	flush func() bool
}

// errNoAnswer ends a review without an answer; the verdict says why.
type errNoAnswer struct{ v Verdict }

func (e errNoAnswer) Error() string { return e.v.Reason }

func (s *ttySession) run() Verdict {
	lines := append([]string{""}, s.r.Header...)
	lines = append(lines, s.r.Diff...)
	if s.r.Cut { // say what was refused, without scrolling 10000 lines past
		s.write(append([]string{""}, s.r.Header...)...)
		s.write(s.sc.paint(sgrBold+sgrRed, fmt.Sprintf(
			"moat: not asking: the diff has %d lines, more than the %d shown for review; the model is told to split the change.",
			s.r.DiffLines, MaxDiffLines)))
		return Verdict{Outcome: TooLarge, Reason: fmt.Sprintf("the diff has %d lines, more than the %d a person is shown", s.r.DiffLines, MaxDiffLines)}
	}
	for {
		if v, done := s.page(lines); done {
			return v
		}
		v, again := s.ask()
		if !again {
			return v
		}
	}
}

// footer is what is written just above the question: the warning, and
// the file and action in one line.
func (s *ttySession) footer() []string {
	var f []string
	if s.r.Warning != "" {
		f = append(f, s.sc.paint(sgrBold+sgrRed, s.r.Warning))
	}
	return append(f, s.sc.paint(sgrBold, "moat: "+s.r.Summary()))
}

// why is what r does besides declining: a reason for the model, or for
// the person's own record when they typed the proposal (moat tool).
func (s *ttySession) why() string {
	if s.r.Typed {
		return "say why"
	}
	return "tell the model why"
}

// question is the question line, with the choices.
func (s *ttySession) question() string {
	return s.sc.paint(sgrBold, s.r.Question()) + " [y]es / [N]o / [r]eason (no, and " + s.why() + ") / [a]gain (the whole diff) "
}

// more is the line that ends a page.
func (s *ttySession) more(shown int) string {
	return s.sc.paint(sgrReverse, fmt.Sprintf("-- %d of %d diff lines --", shown, len(s.r.Diff))) + " [Enter] more / [a]ll / [n]o / [r]eason: "
}

// page shows lines a screenful at a time: as many lines as fit above the
// "more" line, until the rest fits above the footer and the question.
// done is true when the person declined while paging, or the review
// ended.
func (s *ttySession) page(lines []string) (Verdict, bool) {
	room := s.rows - height(s.cols, s.footer()...) - height(s.cols, s.question())
	pos := 0
	for height(s.cols, lines[pos:]...) > room {
		end, used := pos, 0
		avail := s.rows - height(s.cols, s.more(len(s.r.Diff)))
		for end < len(lines) {
			h := height(s.cols, lines[end])
			if used+h > avail && end > pos {
				break
			}
			used += h
			end++
		}
		s.write(lines[pos:end]...)
		pos = end
		for {
			s.prompt(s.more(max(pos-1-len(s.r.Header), 0)))
			ans, err := s.read()
			if err != nil {
				return err.(errNoAnswer).v, true
			}
			switch word, rest := split(ans); word {
			case "":
			case "a", "all":
				s.write(lines[pos:]...)
				return Verdict{}, false
			case "n", "no", "q", "quit": // q leaves a pager
				return s.declined(""), true
			case "r", "reason":
				return s.reason(rest), true
			case "y", "yes":
				s.write(fmt.Sprintf("moat: %d more diff lines to see before you can approve: Enter for the next page, a for all of them.", len(lines)-pos))
				continue
			default:
				s.write("moat: answer Enter (next page), a (all the rest), n or q (no) or r (no, and " + s.why() + ").")
				continue
			}
			break
		}
	}
	s.write(lines[pos:]...)
	return Verdict{}, false
}

// ask asks for the decision once the whole change was shown. again is
// true when the person asked to see it again.
func (s *ttySession) ask() (v Verdict, again bool) {
	for {
		s.write(s.footer()...)
		s.prompt(s.question())
		ans, err := s.read()
		if err != nil {
			return err.(errNoAnswer).v, false
		}
		switch word, rest := split(ans); word {
		case "y", "yes":
			return Verdict{Outcome: Approved}, false
		case "", "n", "no", "q", "quit":
			return s.declined(""), false
		case "r", "reason":
			return s.reason(rest), false
		case "a", "all", "again":
			return Verdict{}, true
		default:
			s.write("moat: answer y (write it), n (do not), r (do not, and " + s.why() + ") or a (show the change again).")
		}
	}
}

// reason reads the person's reason for the model, unless they gave it
// inline ("r use tabs").
func (s *ttySession) reason(inline string) Verdict {
	if inline == "" {
		s.prompt("Reason for the model (one line; Enter alone declines without one): ")
		ans, err := s.read()
		if err != nil {
			if e := err.(errNoAnswer); e.v.Outcome == Cancelled {
				return e.v
			}
			ans = "" // end of input after choosing r: still a no
		}
		inline = strings.TrimSpace(ans)
	}
	return s.declined(inline)
}

func (s *ttySession) declined(reason string) Verdict {
	reason = Reason(reason)
	if reason == "" {
		s.write("moat: not written.")
	} else {
		s.write("moat: not written; the model is told why.")
	}
	return Verdict{Outcome: Declined, Reason: reason}
}

func (s *ttySession) write(lines ...string) {
	for _, l := range lines {
		s.w.WriteString(l)
		s.w.WriteString("\n")
	}
}

func (s *ttySession) prompt(text string) { s.w.WriteString(text) }

// read flushes what was written, then discards every key typed before
// it was on the screen (the terminal's pending input and what this
// session had read ahead), and reads one answer line, without its
// newline. So a key typed ahead of a question, the diff's last page
// included, never answers it. The error is an errNoAnswer.
func (s *ttySession) read() (string, error) {
	if err := s.w.Flush(); err != nil {
		return "", errNoAnswer{Verdict{Outcome: Failed, Reason: "could not write to the terminal: " + display.Line(err.Error())}}
	}
	if s.flush != nil && s.flush() {
		s.in.Discard(s.in.Buffered())
	}
	line, err := readLine(s.ctx, s.in)
	if err != nil {
		s.w.WriteString("\n")
		s.w.Flush()
		if s.ctx.Err() != nil {
			return "", errNoAnswer{Verdict{Outcome: Cancelled, Reason: "the question at the terminal was interrupted"}}
		}
		return "", errNoAnswer{Verdict{Outcome: Unanswered, Reason: "no answer: the terminal reached end of input"}}
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// split returns the first word of an answer, lower-cased, and the rest.
// Only r takes more than a word ("r use tabs"); any other answer with more
// words is not an answer ("yes please" is not "yes"), returned as "?".
func split(ans string) (word, rest string) {
	ans = strings.TrimSpace(ans)
	word, rest, _ = strings.Cut(ans, " ")
	word, rest = strings.ToLower(word), strings.TrimSpace(rest)
	if rest != "" && word != "r" && word != "reason" {
		return "?", ""
	}
	return word, rest
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// readLine reads one whole line, giving up when ctx ends. A line cut short
// by end of input is not an answer. When ctx ends the reading goroutine is
// released by the caller closing the terminal.
func readLine(ctx context.Context, r *bufio.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- result{s, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return "", res.err
		}
		return res.line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// HasTerminal reports whether there is a terminal to ask the person on
// (what Terminal opens by default): a session without one is better not
// offered proposals that could only be refused.
func HasTerminal() bool {
	tty, err := openTTY()
	if err != nil {
		return false
	}
	tty.Close()
	return true
}
