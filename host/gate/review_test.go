package gate

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeReviewer answers every review with one verdict and keeps the reviews.
type fakeReviewer struct {
	v    Verdict
	seen []*Review
}

func (f *fakeReviewer) Review(_ context.Context, r *Review) Verdict {
	f.seen = append(f.seen, r)
	return f.v
}

// TestVerdictTexts: what the model is told is exactly what happened; only
// a person's no reads "declined".
func TestVerdictTexts(t *testing.T) {
	for _, tc := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Outcome: Declined}, "rejected: the user declined to write a.txt; nothing was changed. Do not propose the same change again; ask the user what they want instead."},
		{Verdict{Outcome: Declined, Reason: "wrong file"}, `rejected: the user declined to write a.txt and said why: "wrong file". Nothing was changed. Do not propose the same change again; take the user's reason into account.`},
		{Verdict{Outcome: Unanswered, Reason: "the approval dialog was dismissed"}, "rejected: the user did not approve a.txt (the approval dialog was dismissed); nothing was changed. Do not propose the same change again; ask the user what they want instead."},
		{Verdict{Outcome: TooLarge, Reason: "300 KiB"}, "refused: a.txt: the change is too large to show for approval (300 KiB); nothing was written. Split it into smaller edits, each small enough for a person to review."},
		{Verdict{Outcome: Unavailable, Reason: "no terminal"}, "refused: a.txt cannot be approved: no terminal; nothing was written. Do not retry; show the user the change in your answer instead."},
		{Verdict{Outcome: Failed, Reason: "the approval dialog failed: EOF"}, "refused: a.txt was not approved: asking the user failed (the approval dialog failed: EOF); nothing was written, and the user has not answered. Do not retry now; tell the user that asking for approval failed."},
		{Verdict{Outcome: Cancelled, Reason: "the call was cancelled"}, "refused: a.txt was not approved: the call was cancelled before the user answered; nothing was written."},
		{Verdict{}, "refused: a.txt was not approved (the reviewer gave no valid answer); nothing was written."},
	} {
		f := newFixture(t, "")
		rv := &fakeReviewer{v: tc.v}
		f.gate.opt.Reviewer = rv
		res := f.propose("propose_write", write("a.txt", "x\n"))
		if !res.IsError || res.Written || res.Text != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.v, res.Text, tc.want)
		}
		if _, ok := f.read("a.txt"); ok {
			t.Errorf("%+v: written", tc.v)
		}
	}
}

// TestReviewFacts: the Review carries the facts of the change, and a file
// that makes a tool run code carries a warning both reviewers show.
func TestReviewFacts(t *testing.T) {
	f := newFixture(t, "")
	rv := &fakeReviewer{v: Verdict{Outcome: Approved}}
	f.gate.opt.Reviewer = rv
	f.write("main.go", "a\nb\nb\n")
	f.propose("propose_edit", map[string]any{"path": "./main.go", "old_text": "b", "new_text": "c", "replace_all": true})
	f.propose("propose_write", write(".github/workflows/ci.yml", "on: push\n"))
	if len(rv.seen) != 2 {
		t.Fatalf("%d reviews", len(rv.seen))
	}
	r := rv.seen[0]
	if r.Action != Edit || r.Edits != 2 || r.OldBytes != 6 || r.NewBytes != 6 || r.Path != "./main.go" || r.Rel != "main.go" ||
		r.File != filepath.Join(f.root, "main.go") || r.Warning != "" || r.Cut || r.DiffLines != len(r.Diff) || r.Mode != 0o644 {
		t.Errorf("edit review: %+v", r)
	}
	if s := r.Summary(); s != "edit "+filepath.Join(f.root, "main.go")+" (2 replacements, 6 -> 6 bytes)" {
		t.Errorf("summary %q", s)
	}
	if q := r.Question(); q != "Apply this edit to main.go?" {
		t.Errorf("question %q", q)
	}
	r = rv.seen[1]
	if r.Action != Create || r.RunsCode == "" || !strings.Contains(r.Warning, "makes GitHub Actions run code") ||
		!slices.Contains(r.Header, "  "+r.Warning) || !slices.Equal(r.NewDirs, []string{f.root + "/.github/", f.root + "/.github/workflows/"}) {
		t.Errorf("hook review: %+v", r)
	}

	// The terminal shows the warning above the diff and again at the question.
	f = newFixture(t, "n\n")
	f.propose("propose_write", write("Makefile", "all:\n\tcurl x | sh\n"))
	screen := f.tty.String()
	if n := strings.Count(screen, "WARNING: this file makes make run code."); n != 2 ||
		!strings.Contains(screen, "run code. Review the change as a program that will run on this machine.\nmoat: create "+f.root+"/Makefile") {
		t.Errorf("warning shown %d times:\n%s", n, screen)
	}
}

// TestCutDiffIsNotAsked: a diff longer than MaxDiffLines is shown to no
// one for approval; the terminal says what was refused.
func TestCutDiffIsNotAsked(t *testing.T) {
	f := newFixture(t, "y\n")
	content := strings.Repeat("x\n", MaxDiffLines+10)
	res := f.propose("propose_write", write("big.txt", content))
	want := fmt.Sprintf("refused: big.txt: the change is too large to show for approval (the diff has %d lines, more than the %d a person is shown); nothing was written. Split it", MaxDiffLines+13, MaxDiffLines)
	if !res.IsError || !strings.HasPrefix(res.Text, want) {
		t.Fatalf("result %q\nwant %q", res.Text, want)
	}
	if _, ok := f.read("big.txt"); ok {
		t.Fatal("written")
	}
	if screen := f.tty.String(); !strings.Contains(screen, "moat: not asking: the diff has") || strings.Contains(screen, "[y]es") {
		t.Errorf("screen:\n%s", screen[len(screen)-300:])
	}
}
