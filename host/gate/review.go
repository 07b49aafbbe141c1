package gate

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/moatdev/moat/host/display"
)

// A Reviewer shows one proposed change to a person and returns their
// answer. The gate has already checked the change and rendered it; the
// reviewer only presents it and asks. The terminal ([Terminal], on
// /dev/tty) and moat mcp's elicitation dialog are the two implementations.
//
// Review must return [Approved] only for an explicit yes from a person who
// could see the whole change: never for a Review whose Cut is set, never
// by default, never on an error. Every other outcome writes nothing; which
// one it is decides what the model is told, so it must be exactly what
// happened. ctx ends when the call is cancelled or moat is interrupted.
type Reviewer interface {
	Review(ctx context.Context, r *Review) Verdict
}

// A Reporter is a Reviewer that also tells the person what became of a
// change they approved (written, or refused because the file changed while
// they were reading). The terminal is one; a dialog is not, because the
// client shows the tool's result itself.
type Reporter interface {
	Report(r *Review, msg string)
}

// Action is what a change does to its file.
type Action int

const (
	Create  Action = iota + 1 // a new file (and maybe new folders)
	Replace                   // propose_write over an existing file
	Edit                      // propose_edit: replacements in an existing file
)

func (a Action) String() string {
	switch a {
	case Create:
		return "create"
	case Replace:
		return "replace"
	case Edit:
		return "edit"
	}
	return "?"
}

// Review is one proposed change as a person is shown it: the facts of the
// change, and the same facts rendered as lines. Every string in it is safe
// to print: untrusted characters are escaped (display.Sanitize), and the
// only escape sequences are the gate's own colours when Options.Color is
// set.
type Review struct {
	Tool     string      // propose_write or propose_edit
	Path     string      // the path as the model wrote it
	Rel      string      // the file, cleaned and relative to the root
	File     string      // the root folder's name, "/", Rel: how the person knows the file
	Action   Action      // create, replace or edit
	Edits    int         // Edit: the number of replacements
	OldBytes int         // the file's size now (0 for Create)
	NewBytes int         // the size after the change
	Mode     fs.FileMode // the permission bits the file will have
	NewDirs  []string    // folders that will be created, outermost first, as File is written
	// RunsCode names the tool that runs this file's content as code (git
	// hooks, pre-commit, VS Code's MCP servers, ...), "" for an ordinary
	// file. Warning is the line that says so; reviewers show it loudly,
	// above the diff and again at the question.
	RunsCode string
	// NotPlain says why a file no row names is still not plain data (a
	// dotfile, executable, a build manifest or config by its name:
	// policy.NotPlain), "" when it is plain; Warning then says so too.
	NotPlain string
	Warning  string
	// Typed: the person typed the proposal (moat tool), so a reason for a
	// no goes back to them, not to a model.
	Typed bool

	Header []string // the summary above the diff: title, path, file, action, notes
	Diff   []string // the unified diff, one line per element
	// Cut is set when Diff is not the whole diff: it has DiffLines lines,
	// more than [MaxDiffLines]. No one can approve what they cannot see, so
	// reviewers answer [TooLarge] and may show the person what was refused.
	Cut       bool
	DiffLines int
}

// Summary is the change in one line, to repeat at the question after a
// long diff: "edit proj/notes.txt (1 replacement, 62 -> 63 bytes)".
func (r *Review) Summary() string {
	switch r.Action {
	case Create:
		s := fmt.Sprintf("create %s (%d bytes", r.File, r.NewBytes)
		if n := len(r.NewDirs); n > 0 {
			s += fmt.Sprintf(", %d new folder%s", n, plural(n))
		}
		return s + ")"
	case Edit:
		return fmt.Sprintf("edit %s (%d replacement%s, %d -> %d bytes)", r.File, r.Edits, plural(r.Edits), r.OldBytes, r.NewBytes)
	}
	return fmt.Sprintf("replace all of %s (%d -> %d bytes)", r.File, r.OldBytes, r.NewBytes)
}

// Question asks for the decision in the words of the action: "Create
// notes.txt?", "Replace notes.txt?", "Apply this edit to notes.txt?".
func (r *Review) Question() string {
	switch r.Action {
	case Create:
		return "Create " + r.Rel + "?"
	case Edit:
		return "Apply this edit to " + r.Rel + "?"
	}
	return "Replace " + r.Rel + "?"
}

// Outcome is how a review ended.
type Outcome int

const (
	// Approved: a person explicitly said yes. The only outcome that writes.
	Approved Outcome = iota + 1
	// Declined: a person said no. Verdict.Reason holds what they want the
	// model to know, or "".
	Declined
	// Unanswered: a person was shown the change and gave no answer (end of
	// input, a dismissed dialog, no answer in time). Verdict.Reason says
	// which.
	Unanswered
	// TooLarge: the change is too large for this reviewer to show whole.
	// Verdict.Reason gives the sizes.
	TooLarge
	// Unavailable: there is no one to ask (no terminal, a client that
	// cannot show a dialog). Verdict.Reason says why.
	Unavailable
	// Failed: asking failed (the dialog errored, the terminal could not be
	// written). Verdict.Reason says how.
	Failed
	// Cancelled: the call ended (cancelled by the client, moat
	// interrupted) before an answer came. Verdict.Reason says which.
	Cancelled
)

// Verdict is a reviewer's answer.
type Verdict struct {
	Outcome Outcome
	// Reason: for Declined, the person's own words for the model ("" if
	// they gave none), already made safe to print; for the other outcomes
	// except Approved, a short phrase saying what happened, which the
	// gate's message to the model quotes.
	Reason string
}

// MaxReasonBytes caps the reason a person types for the model.
const MaxReasonBytes = 500

// Reason is a person's reason for a no as the model is told it, from any
// reviewer: one line, escaped for display, at most MaxReasonBytes.
func Reason(typed string) string {
	return clip(display.Line(strings.TrimSpace(typed)), MaxReasonBytes)
}

// result is what the model is told about a verdict other than Approved,
// and what the audit log records.
func (v Verdict) result(shown string) (text string, out outcome) {
	switch v.Outcome {
	case Declined:
		if v.Reason == "" {
			return fmt.Sprintf("rejected: the user declined to write %s; nothing was changed. Do not propose the same change again; ask the user what they want instead.", shown),
				outcome{decision: "rejected", reason: "declined"}
		}
		return fmt.Sprintf("rejected: the user declined to write %s and said why: \"%s\". Nothing was changed. Do not propose the same change again; take the user's reason into account.", shown, v.Reason),
			outcome{decision: "rejected", reason: "declined: \"" + v.Reason + "\""}
	case Unanswered:
		return fmt.Sprintf("rejected: the user did not approve %s (%s); nothing was changed. Do not propose the same change again; ask the user what they want instead.", shown, v.Reason),
			outcome{decision: "rejected", reason: v.Reason}
	case TooLarge:
		return fmt.Sprintf("refused: %s: the change is too large to show for approval (%s); nothing was written. Split it into smaller edits, each small enough for a person to review.", shown, v.Reason),
			outcome{decision: "refused", reason: "too large to review: " + v.Reason}
	case Unavailable:
		return fmt.Sprintf("refused: %s cannot be approved: %s; nothing was written. Do not retry; show the user the change in your answer instead.", shown, v.Reason),
			outcome{decision: "refused", reason: v.Reason}
	case Failed:
		return fmt.Sprintf("refused: %s was not approved: asking the user failed (%s); nothing was written, and the user has not answered. Do not retry now; tell the user that asking for approval failed.", shown, v.Reason),
			outcome{decision: "refused", reason: "asking failed: " + v.Reason}
	case Cancelled:
		return fmt.Sprintf("refused: %s was not approved: %s before the user answered; nothing was written.", shown, v.Reason),
			outcome{decision: "refused", reason: v.Reason}
	}
	return fmt.Sprintf("refused: %s was not approved (the reviewer gave no valid answer); nothing was written.", shown),
		outcome{decision: "refused", reason: fmt.Sprintf("invalid verdict %d", v.Outcome)}
}
