package gate

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/display"
)

// SGR sequences for the coloured prompt. They are the only escape
// sequences the gate writes; everything from the model or the disk is
// sanitized before it is put between them.
const (
	sgrReset   = "\x1b[0m"
	sgrBold    = "\x1b[1m"
	sgrRed     = "\x1b[31m"
	sgrGreen   = "\x1b[32m"
	sgrCyan    = "\x1b[36m"
	sgrYellow  = "\x1b[33m"
	sgrReverse = "\x1b[7m"
	sgrNoRev   = "\x1b[27m"
)

// contextLines is the unchanged lines shown around each change, as diff -u.
const contextLines = 3

// screen renders the prompt for one proposal.
type screen struct {
	color bool
}

func (s screen) paint(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return code + text + sgrReset
}

// safe sanitizes untrusted text for the prompt, marking escapes in reverse
// video when colour is on so they stand out from literal backslashes.
func (s screen) safe(text string, layout bool) string {
	e := display.Escaper{Layout: layout}
	if s.color {
		e.Mark = func(esc string) string { return sgrReverse + esc + sgrNoRev }
	}
	return e.String(text)
}

// header is the summary above the diff: what is written where, and what to
// watch for.
func (g *Gate) header(sc screen, p *proposal, snap *snapshot) []string {
	var h []string
	add := func(label, format string, args ...any) {
		h = append(h, fmt.Sprintf("  %-8s %s", label, fmt.Sprintf(format, args...)))
	}
	h = append(h, sc.paint(sgrBold, fmt.Sprintf("moat: the model proposes a change (%s)", p.tool)))
	add("path", "%s  (as the model wrote it)", sc.safe(p.given, false))
	add("file", "%s  (inside the workspace root)", sc.paint(sgrBold, sc.safe(g.name, false)+"/"+p.rel))
	size := len(p.content)
	switch {
	case !snap.exists:
		add("action", "%s, %d bytes, mode 0644", sc.paint(sgrYellow, "create a new file"), size)
	case p.tool == proto.ProposeEdit:
		add("action", "edit the existing file (%d replacement%s): %d -> %d bytes, mode %04o kept",
			p.edits, plural(p.edits), len(snap.data), size, snap.info.Mode().Perm())
	default:
		add("action", "replace the existing file: %d -> %d bytes, mode %04o kept", len(snap.data), size, snap.info.Mode().Perm())
	}
	if len(snap.newDirs) > 0 {
		dirs := make([]string, len(snap.newDirs))
		for i, d := range snap.newDirs {
			dirs[i] = sc.safe(g.name, false) + "/" + d + "/"
		}
		add("folders", "%s %s", sc.paint(sgrYellow, "will be created:"), strings.Join(dirs, ", "))
	}
	if size > 0 && p.content[size-1] != '\n' {
		add("note", "the new content does not end with a newline")
	}
	if n := display.Count(string(p.content)); n > 0 {
		add("note", "%s", sc.paint(sgrYellow, fmt.Sprintf(
			"the new content has %d control or invisible character%s, shown escaped (like \\x1b, \\r, \\u202e)", n, plural(n))))
	}
	if snap.exists && binary(snap.data) {
		add("note", "the current file is binary; only the new content is shown")
	}
	return h
}

// diffLines renders the unified diff, one sanitized line per element.
func (g *Gate) diffLines(sc screen, p *proposal, snap *snapshot) []string {
	from, old := "a/"+p.rel, string(snap.data)
	switch {
	case !snap.exists:
		from = "/dev/null"
	case binary(snap.data):
		from, old = fmt.Sprintf("a/%s (binary, %d bytes, not shown)", p.rel, len(snap.data)), ""
	}
	to := string(p.content)
	u, err := udiff.ToUnifiedDiff(from, "b/"+p.rel, old, udiff.Lines(old, to), contextLines)
	if err != nil { // cannot happen for edits computed from old; show the content instead
		u, _ = udiff.ToUnifiedDiff("/dev/null", "b/"+p.rel, "", udiff.Lines("", to), contextLines)
	}
	out := []string{sc.paint(sgrBold, "--- "+sc.safe(u.From, false)), sc.paint(sgrBold, "+++ "+sc.safe(u.To, false))}
	for _, h := range u.Hunks {
		var del, ins int
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				del++
			case udiff.Insert:
				ins++
			default:
				del++
				ins++
			}
		}
		out = append(out, sc.paint(sgrCyan, fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.FromLine, del), hunkRange(h.ToLine, ins))))
		for _, l := range h.Lines {
			text, nl := strings.CutSuffix(l.Content, "\n")
			mark, code := " ", ""
			switch l.Kind {
			case udiff.Delete:
				mark, code = "-", sgrRed
			case udiff.Insert:
				mark, code = "+", sgrGreen
			}
			// text has no newline left; Layout keeps tabs, escapes the rest.
			out = append(out, sc.paint(code, mark+sc.safe(text, true)))
			if !nl {
				out = append(out, `\ No newline at end of file`)
			}
		}
	}
	return out
}

// hunkRange formats one side of a hunk header the way diff -u does.
func hunkRange(start, n int) string {
	switch {
	case n == 0:
		return fmt.Sprintf("%d,0", max(start-1, 0))
	case n == 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// ask shows the proposal on the terminal and reads the answer. Only "y" or
// "yes" followed by Enter approves; "a" shows the whole diff and asks
// again; anything else, end of input or ctx ending rejects. The second
// result says why, for the audit log.
func (g *Gate) ask(ctx context.Context, tty TTY, p *proposal, snap *snapshot) (bool, string) {
	sc := screen{color: g.opt.Color}
	head, diff := g.header(sc, p, snap), g.diffLines(sc, p, snap)
	w := bufio.NewWriter(tty)
	show := func(lines []string) {
		for _, l := range lines {
			w.WriteString(l)
			w.WriteString("\n")
		}
	}
	w.WriteString("\n")
	show(head)
	if len(diff) > g.opt.DiffLines {
		show(diff[:g.opt.DiffLines])
		fmt.Fprintf(w, "... %d more diff lines not shown; answer a to see the whole diff\n", len(diff)-g.opt.DiffLines)
	} else {
		show(diff)
	}
	r := bufio.NewReader(tty)
	for {
		w.WriteString(sc.paint(sgrBold, "Apply? [y/N] "))
		if err := w.Flush(); err != nil {
			return false, "could not write to the terminal"
		}
		line, err := readLine(ctx, r)
		if err != nil {
			if ctx.Err() != nil {
				io.WriteString(tty, "\n")
				return false, "interrupted"
			}
			io.WriteString(tty, "\n")
			return false, "no answer (end of input)"
		}
		switch ans := strings.ToLower(strings.TrimSpace(line)); ans {
		case "y", "yes":
			return true, ""
		case "a", "all":
			show(head)
			show(diff)
		default:
			return false, fmt.Sprintf("answered %q", truncate(ans, 40))
		}
	}
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

// binary reports whether data is not text a person could review: a NUL
// byte or invalid UTF-8.
func binary(data []byte) bool {
	return strings.IndexByte(string(data), 0) >= 0 || !utf8.Valid(data)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
