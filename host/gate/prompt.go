package gate

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/moatdev/moat/host/display"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
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

// MaxDiffLines is the most diff lines a Review carries. A longer diff is
// cut (Review.Cut) and the change refused as too large to review: nobody
// pages through more, and rendering an 8 MiB rewrite line by line is not
// free.
const MaxDiffLines = 10000

// review builds what a reviewer shows for p: the facts, the header and
// the diff.
func (g *Gate) review(sc screen, p *proposal, snap *snapshot) *Review {
	r := &Review{
		Tool: p.tool, Path: p.shown, Rel: g.named(p.rel),
		File:     display.Line(g.abs(p.rel)),
		NewBytes: len(p.content), Mode: 0o644, Typed: g.opt.Typed,
	}
	switch {
	case !snap.exists:
		r.Action = Create
	case p.edit:
		r.Action, r.Edits = Edit, p.edits
	default:
		r.Action = Replace
	}
	if snap.exists {
		r.OldBytes, r.Mode = len(snap.data), snap.info.Mode().Perm()
	}
	for _, d := range snap.newDirs {
		r.NewDirs = append(r.NewDirs, display.Line(g.abs(d))+string(filepath.Separator))
	}
	var mode fs.FileMode
	if snap.exists {
		mode = snap.info.Mode()
	}
	if tool, ok := policy.RunsCode(p.rel); ok {
		r.RunsCode = tool
		r.Warning = fmt.Sprintf("WARNING: this file makes %s run code. Review the change as a program that will run on this machine.", tool)
	} else if p.named != nil {
		r.RunsCode = p.named.By
		r.Warning = fmt.Sprintf("WARNING: %s names this file (%s) as code it runs. Review the change as a program that will run on this machine.", display.Line(p.named.By), display.Line(p.named.Rel))
	} else if why, ok := policy.NotPlain(p.rel, mode, snap.data, p.content); ok {
		r.NotPlain = why
		r.Warning = "WARNING: this is not a plain data file: " + why + ". Review the change as code or configuration a tool will load."
	}
	diff, hidden := g.diffLines(sc, p, snap, g.secretsOf(p.rel, snap))
	r.Header = g.header(sc, p, snap, r, hidden)
	r.DiffLines = len(diff)
	if len(diff) > MaxDiffLines {
		diff, r.Cut = diff[:MaxDiffLines], true
	}
	r.Diff = diff
	return r
}

// header is the summary above the diff: what is written where, and what to
// watch for.
func (g *Gate) header(sc screen, p *proposal, snap *snapshot, r *Review, hidden int) []string {
	var h []string
	add := func(label, format string, args ...any) {
		h = append(h, fmt.Sprintf("  %-8s %s", label, fmt.Sprintf(format, args...)))
	}
	title, wrote := fmt.Sprintf("moat: the model proposes a change (%s)", p.tool), "as the model wrote it"
	if g.opt.Typed {
		title, wrote = fmt.Sprintf("moat: you propose a change (%s, typed at moat tool)", p.tool), "as you typed it"
	}
	h = append(h, sc.paint(sgrBold, title))
	if r.Warning != "" {
		h = append(h, sc.paint(sgrBold+sgrRed, "  "+r.Warning))
	}
	add("path", "%s  (%s)", sc.safe(g.named(p.given), false), wrote)
	add("file", "%s  (inside the workspace root)", sc.paint(sgrBold, sc.safe(g.abs(p.rel), false)))
	size := len(p.content)
	switch r.Action {
	case Create:
		add("action", "%s, %d bytes, mode 0644", sc.paint(sgrYellow, "create a new file"), size)
	case Edit:
		add("action", "edit the existing file (%d replacement%s): %d -> %d bytes, mode %04o kept",
			p.edits, plural(p.edits), len(snap.data), size, snap.info.Mode().Perm())
	default:
		add("action", "replace the existing file: %d -> %d bytes, mode %04o kept", len(snap.data), size, snap.info.Mode().Perm())
	}
	if len(snap.newDirs) > 0 {
		dirs := make([]string, len(snap.newDirs))
		for i, d := range snap.newDirs {
			dirs[i] = sc.safe(g.abs(d), false) + string(filepath.Separator)
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
	if hidden > 0 {
		add("note", "%s", sc.paint(sgrYellow, fmt.Sprintf("secrets of the current file (keys, tokens) are shown as [redacted: RULE] in %d diff line%s; text the model adds is never hidden", hidden, plural(hidden))))
	}
	return h
}

// secretsOf finds the secrets of the current file, as the pieces of text
// to hide wherever they appear in the diff: each secret's lines (a key
// block is many), those long enough to be worth hiding. Only the file's
// own secrets are hidden, in removed, kept and added lines alike, never
// anything else: a model could otherwise make its own text look like a
// key and have it hidden from the person approving it. They are found as
// the tools' view finds them (host/confine): in the whole file, by the
// rules for its name and shape (redact.FindFile).
func (g *Gate) secretsOf(rel string, snap *snapshot) []secretPiece {
	if g.opt.Redactor == nil || !snap.exists || binary(snap.data) {
		return nil
	}
	old := string(snap.data)
	var out []secretPiece
	for _, f := range g.opt.Redactor.FindFile(rel, snap.data) {
		for _, piece := range strings.Split(old[f.Start:f.End], "\n") {
			if piece = strings.TrimSuffix(piece, "\r"); len(piece) >= minSecretPiece {
				out = append(out, secretPiece{piece, redact.Mark(f.Rule)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i].text) > len(out[j].text) })
	return out
}

// minSecretPiece is the shortest line of a secret the diff hides: shorter
// ones (a key block's last few characters) say nothing and would hide
// innocent text.
const minSecretPiece = 8

type secretPiece struct{ text, mark string }

// hideSecrets replaces every piece in one diff line, longest first.
func hideSecrets(line string, hide []secretPiece) string {
	for _, s := range hide {
		if strings.Contains(line, s.text) {
			line = strings.ReplaceAll(line, s.text, s.mark)
		}
	}
	return line
}

// diffLines renders the unified diff, one sanitized line per element.
// It also counts the lines in which the file's secrets were hidden.
func (g *Gate) diffLines(sc screen, p *proposal, snap *snapshot, hide []secretPiece) ([]string, int) {
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
	hidden := 0
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
			if h := hideSecrets(text, hide); h != text {
				text = h
				hidden++
			}
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
	return out, hidden
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

// abs is the absolute path of rel, a path inside the root: what a person
// is shown, so that it cannot be read as relative to the current folder.
func (g *Gate) abs(rel string) string {
	return filepath.Join(g.opt.Root, filepath.FromSlash(rel))
}
