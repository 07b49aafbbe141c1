package tools

// grep's answer: its output modes and caps, the notes after the hits, and
// the merge of a split grep's parts into the answer one instance gives.

import (
	"slices"
	"strings"

	"github.com/moatdev/moat/guest/proto"
)

// MergeGrep joins the answers of a grep's shards (none of them an error)
// into the answer one instance would have given: files in walk order, the
// same caps, notices and notes, byte for byte in every output mode. args
// and lim are the grep's.
//
// The notes of all shards are merged as one walk would have made them: a
// note several shards made (the .gitignore of a folder every shard walks)
// once, at the first place of the walk it arose, and none from beyond the
// file where one instance would have stopped at a cap. That one instance
// stops at the file where the merged hits reach the cap or at a shard's
// StopAt, whichever comes first: every shard walks at least that far. The
// count of notes past those shown is exact unless a shard kept fewer than
// it had (more than maxShardNotes); a deadline's note from any shard is
// kept, as the answer may then lack hits of that shard.
func MergeGrep(args []byte, lim proto.Limits, shards []proto.GrepShardResult) proto.Response {
	var a proto.GrepArgs
	proto.DecodeArgs(args, &a) // the shards decoded the same bytes without error
	var parts []proto.GrepPart
	more := false
	for _, r := range shards {
		parts = append(parts, r.Parts...)
		more = more || r.More
	}
	slices.SortStableFunc(parts, func(x, y proto.GrepPart) int { return walkOrder(x.Path, y.Path) })
	ans := takeParts(a, lim, parts, more)

	stop, stopped := ans.cutAt, ans.cut
	for _, r := range shards {
		if r.More && r.StopAt != "" && (!stopped || walkOrder(r.StopAt, stop) < 0) {
			stop, stopped = r.StopAt, true
		}
	}
	notes := make([]shardNotes, len(shards))
	for i, r := range shards {
		notes[i] = shardNotes{r.Notes, r.MoreNotes, r.TimeUp}
	}
	list, moreNotes, late := mergeNotes(notes, stop, stopped)
	return proto.Response{Text: ans.finish(a, list, moreNotes, late)}
}

// shardNotes are the notes of one shard's answer.
type shardNotes struct {
	notes  []proto.GrepNote
	more   int
	timeUp string
}

// mergeNotes merges the shards' notes as one walk would have made them:
// each text once, at the earliest place it arose, in walk order, without
// those past stop when stopped (where one instance would have stopped);
// more counts those the shards had past the ones they sent, and late is
// a deadline's note from any shard.
func mergeNotes(shards []shardNotes, stop string, stopped bool) (list []walkNote, more int, late string) {
	seen := map[string]int{} // text -> index in list
	for _, r := range shards {
		more += r.more
		if late == "" {
			late = r.timeUp
		}
		for _, n := range r.notes {
			if stopped && walkOrder(n.At, stop) > 0 {
				continue
			}
			if i, ok := seen[n.Text]; ok {
				if walkOrder(n.At, list[i].at) < 0 {
					list[i].at = n.At
				}
				continue
			}
			seen[n.Text] = len(list)
			list = append(list, walkNote{at: n.At, text: n.Text})
		}
	}
	slices.SortStableFunc(list, func(x, y walkNote) int { return walkOrder(x.at, y.at) })
	return list, more, late
}

// grepAnswer is grep's answer being written: the hits taken so far.
type grepAnswer struct {
	b     strings.Builder
	n     int    // hits (files outside content mode) taken
	more  bool   // it stopped early: more exist
	full  bool   // stopped by the byte cap, not max_results
	cut   bool   // it stopped inside the parts, at cutAt
	cutAt string // the path of the part it stopped at
}

// takeParts starts grep's answer from the parts of the files with hits, in
// walk order: their text up to max_results hits and MaxGrepBytes bytes,
// cut only where one instance would have stopped (GrepPart.Cuts). A single
// grep and MergeGrep both answer through it and finish, so they agree by
// construction.
func takeParts(a proto.GrepArgs, lim proto.Limits, parts []proto.GrepPart, more bool) *grepAnswer {
	max := grepMax(a, lim)
	sep := grepSep(a)
	ans := &grepAnswer{more: more}
	b := &ans.b
	n, full := 0, false
	for _, p := range parts {
		s := ""
		if b.Len() > 0 {
			s = sep
		}
		k := 0
		for k < len(p.Cuts) && n+k < max && b.Len()+len(s)+p.Cuts[k] <= proto.MaxGrepBytes {
			k++
		}
		if k > 0 {
			b.WriteString(s)
			b.WriteString(p.Text[:p.Cuts[k-1]])
		}
		n += k
		if k < len(p.Cuts) {
			full = n < max // stopped by the byte cap, not max_results
			ans.more, ans.cut, ans.cutAt = true, true, p.Path
			break
		}
	}
	ans.n, ans.full = n, full
	return ans
}

// finish ends the answer: a notice when it stopped early or a sentence
// when nothing matched, then the notes of the walk (walkNotes.write), the
// first maxNotes of list and a count of the others.
func (ans *grepAnswer) finish(a proto.GrepArgs, list []walkNote, moreNotes int, late string) string {
	b := &ans.b
	switch {
	case ans.n > 0 || ans.more || late == noteFileTimeUpWithheld:
		// Hits to show, or some found that the note explains.
	case late != "":
		fmtTo(b, "no matches for %s in %s before the time limit\n", a.Pattern, displayPath(a.Path))
	default:
		fmtTo(b, "no matches for %s in %s\n", a.Pattern, displayPath(a.Path))
	}
	if ans.more {
		unit := "matches"
		if grepMode(a) != proto.GrepContent {
			unit = "files"
		}
		if ans.full {
			fmtTo(b, "[stopped after %d %s at the %s output limit; more exist — narrow the pattern, path or glob]\n",
				ans.n, unit, humanSize(proto.MaxGrepBytes))
		} else {
			fmtTo(b, "[stopped after %d %s; more exist — narrow the pattern, path or glob]\n", ans.n, unit)
		}
	}
	writeNotes(b, list, moreNotes, late)
	return strings.TrimSuffix(b.String(), "\n")
}

// grepMode is the output mode asked for, content by default.
func grepMode(a proto.GrepArgs) string {
	if a.OutputMode == "" {
		return proto.GrepContent
	}
	return a.OutputMode
}

// grepContext returns how many lines of context to show before and after
// each hit: before_context and after_context, when given (0 too), override
// context, as ripgrep's -B and -A override -C. Only content mode shows
// context.
func grepContext(a proto.GrepArgs) (before, after int) {
	if grepMode(a) != proto.GrepContent {
		return 0, 0
	}
	before, after = a.Context, a.Context
	if a.BeforeGiven || a.BeforeContext > 0 {
		before = a.BeforeContext
	}
	if a.AfterGiven || a.AfterContext > 0 {
		after = a.AfterContext
	}
	return min(before, proto.MaxContext), min(after, proto.MaxContext)
}

// grepSep is what stands between the output of two files: ripgrep's "--"
// when context is shown, nothing otherwise.
func grepSep(a proto.GrepArgs) string {
	if b, c := grepContext(a); b > 0 || c > 0 {
		return "--\n"
	}
	return ""
}

// walkOrder compares root-relative paths in the order fs.WalkDir visits
// them: folder by folder, names sorted within each.
func walkOrder(x, y string) int {
	for {
		xa, xrest, xok := strings.Cut(x, "/")
		ya, yrest, yok := strings.Cut(y, "/")
		if c := strings.Compare(xa, ya); c != 0 {
			return c
		}
		if !xok || !yok {
			switch {
			case xok == yok:
				return 0
			case !xok:
				return -1
			}
			return 1
		}
		x, y = xrest, yrest
	}
}

// grepMax is how many hits (files, outside content mode) an answer shows:
// max_results, else the host's limit, else the default, and never more
// than proto.MaxMaxResults, which bounds the guest's memory whatever the
// host asks for.
func grepMax(a proto.GrepArgs, lim proto.Limits) int {
	n := proto.DefaultMaxResults
	switch {
	case a.MaxResults > 0:
		n = a.MaxResults
	case lim.MaxResults > 0:
		n = lim.MaxResults
	}
	return min(n, proto.MaxMaxResults)
}
