package gate

import (
	"slices"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
)

// TestEdits: propose_edit's list of edits is applied in order, each to the
// result of the ones before, shown as one diff and answered once; one
// failing edit means nothing is written and nobody is asked.
func TestEdits(t *testing.T) {
	const src = "a := 1\nb := 2\na := 1\nc := 3\n"
	type e = map[string]any
	edits := func(list ...e) map[string]any {
		l := make([]any, len(list))
		for i, x := range list {
			l[i] = x
		}
		return map[string]any{"path": "x.go", "edits": l}
	}
	cases := []struct {
		name string
		args map[string]any
		res  string // prefix of the result
		file string // content afterwards
		diff []string
	}{
		{"in order", edits(
			e{"old_text": "b := 2", "new_text": "b := 20"},
			e{"old_text": "a := 1", "new_text": "a := 9", "replace_all": true},
			e{"old_text": "b := 20", "new_text": "b := 21"}, // matches only what the first edit wrote
		), "wrote x.go (29 bytes)", "a := 9\nb := 21\na := 9\nc := 3\n",
			[]string{"-a := 1", "-b := 2", "+a := 9", "+b := 21"}},
		{"one", edits(e{"old_text": "c := 3", "new_text": "c := 4"}), "wrote x.go", "a := 1\nb := 2\na := 1\nc := 4\n", nil},
		{"second not found", edits(
			e{"old_text": "b := 2", "new_text": "b := 20"},
			e{"old_text": "b := 2\n", "new_text": ""}, // the first edit changed it
			e{"old_text": "c := 3", "new_text": "c := 4"},
		), "error: edits[1] (edit 2 of 3): old_text not found in x.go;", src, nil},
		{"last ambiguous", edits(
			e{"old_text": "c := 3", "new_text": "c := 4"},
			e{"old_text": "a := 1", "new_text": "z"},
		), "error: edits[1] (edit 2 of 2): old_text occurs 2 times in x.go (at lines 1, 3)", src, nil},
		{"empty old_text", edits(e{"old_text": "", "new_text": "x"}), "error: edits[0] (edit 1 of 1): old_text is empty", src, nil},
		{"same", edits(e{"old_text": "b := 2", "new_text": "b := 20"}, e{"old_text": "c", "new_text": "c"}), "error: edits[1] (edit 2 of 2): old_text and new_text are the same", src, nil},
		{"empty list", edits(), "error: edits is empty", src, nil},
		{"too many", edits(slices.Repeat([]e{{"old_text": "c := 3", "new_text": "c := 4"}}, proto.MaxEdits+1)...),
			"error: edits holds 101 edits, more than the 100 one proposal may", src, nil},
		{"both forms", map[string]any{"path": "x.go", "old_text": "a", "new_text": "b", "edits": []any{e{"old_text": "c", "new_text": "d"}}},
			"error: propose_edit takes either old_text and new_text (one replacement) or edits (several), not both", src, nil},
		{"both forms, replace_all", map[string]any{"path": "x.go", "replace_all": true, "edits": []any{e{"old_text": "c", "new_text": "d"}}},
			"error: propose_edit takes either", src, nil},
		{"neither form", map[string]any{"path": "x.go"}, `error: propose_edit needs "old_text" and "new_text" (strings), or "edits"`, src, nil},
		{"undone back to the start", edits(e{"old_text": "c := 3", "new_text": "c := 4"}, e{"old_text": "c := 4", "new_text": "c := 3"}),
			"error: x.go already has exactly this content", src, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "y\n")
			f.write("x.go", src)
			res := f.propose("propose_edit", tc.args)
			if !strings.HasPrefix(res.Text, tc.res) || res.IsError != strings.HasPrefix(tc.res, "error") {
				t.Errorf("result %+v, want %q", res, tc.res)
			}
			if got, _ := f.read("x.go"); got != tc.file {
				t.Errorf("file %q, want %q", got, tc.file)
			}
			screen := f.tty.String()
			asked := strings.Count(screen, "[y]es / [N]o")
			switch {
			case res.IsError && f.opens != 0:
				t.Errorf("prompt shown for a failed edit")
			case !res.IsError && asked != 1:
				t.Errorf("asked %d times for one proposal, want once:\n%s", asked, screen)
			}
			if n := strings.Count(screen, "+++ b/x.go"); !res.IsError && n != 1 {
				t.Errorf("%d diffs shown, want one:\n%s", n, screen)
			}
			for _, l := range tc.diff {
				if !strings.Contains(screen, "\n"+l+"\n") {
					t.Errorf("diff line %q not shown:\n%s", l, screen)
				}
			}
			f.noTemp()
		})
	}
}
