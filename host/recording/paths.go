package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/scripted"
	"github.com/moatdev/moat/host/toolspec"
)

// Paths in a recording are relative to the root, whatever form a call
// used: an absolute path inside the root (which the engine maps to a
// relative one, policy.Within) is recorded as "<root>/notes.txt", in the
// call's arguments and in every text that names it, and a replay gives
// the call the replay root's absolute path instead. So a recording holds
// no absolute path of the machine it was made on, and a call made with
// one replays against whatever root the replay has.

// rootsOf is the root's absolute path and, when it differs, the path with
// its symbolic links resolved (the engine accepts both).
func rootsOf(root string) []string {
	if root == "" {
		return nil
	}
	r := filepath.Clean(root)
	out := []string{r}
	if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
		out = append(out, real)
	}
	// The longest first: one may hold the other.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// rootForm is one absolute form of a root and the token a recording
// writes for it: "<root>" for the one root of a session, "<root>/LABEL"
// for each of several (a replay restores them as the folders LABEL of
// one folder, the <root> it is given).
type rootForm struct{ abs, token string }

// formsOf is the forms of the root, or of each of several (labelled)
// roots, the longest first: one may hold another.
func formsOf(root string, several []confine.Dir) []rootForm {
	var out []rootForm
	for _, a := range rootsOf(root) {
		out = append(out, rootForm{a, rootToken})
	}
	for _, d := range several {
		for _, a := range rootsOf(d.Path) {
			out = append(out, rootForm{a, rootToken + "/" + d.Label})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].abs) > len(out[j].abs) })
	return out
}

// relText writes every absolute path inside the root in s as
// "<root>/...": the root followed by a separator, or ending a word.
func relText(s string, roots []rootForm) string {
	for _, f := range roots {
		root := f.abs
		if root == "" || root == string(filepath.Separator) || !strings.Contains(s, root) {
			continue
		}
		var b strings.Builder
		for {
			i := strings.Index(s, root)
			if i < 0 {
				b.WriteString(s)
				break
			}
			end := i + len(root)
			if end < len(s) && nameByte(s[end]) {
				b.WriteString(s[:end]) // another folder that starts the same
				s = s[end:]
				continue
			}
			b.WriteString(s[:i])
			b.WriteString(f.token)
			if end < len(s) && s[end] == filepath.Separator {
				b.WriteByte('/')
				end++
			}
			s = s[end:]
		}
		s = b.String()
	}
	return s
}

// nameByte reports whether c can go on a file name (so that the root is
// only a prefix of another folder's name).
func nameByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' || c == ' ' || c >= 0x80 ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// relArgs writes each path argument of a call that is an absolute path
// inside the root as "<root>/...". Arguments that are not a JSON object,
// or have no such path, are returned as they are.
func relArgs(tool, args string, roots []rootForm) string {
	return mapPathArgs(tool, args, func(v string) (string, bool) {
		for _, f := range roots {
			if v == f.abs {
				return f.token, true
			}
			if rest, ok := strings.CutPrefix(v, f.abs+string(filepath.Separator)); ok {
				return f.token + "/" + filepath.ToSlash(rest), true
			}
		}
		return v, false
	})
}

// absArgs is relArgs undone for a replay root: "<root>/x" becomes the
// replay root's absolute path of x.
func absArgs(tool, args string, roots []rootForm) string {
	return mapPathArgs(tool, args, func(v string) (string, bool) {
		for _, f := range roots {
			if v == f.token {
				return f.abs, true
			}
			if rest, ok := strings.CutPrefix(v, f.token+"/"); ok {
				return f.abs + string(filepath.Separator) + filepath.FromSlash(rest), true
			}
		}
		return v, false
	})
}

// mapPathArgs applies f to every path argument of tool (the tool table's
// PathFields) that is a string.
func mapPathArgs(tool, args string, f func(string) (string, bool)) string {
	fields := toolspec.PathFieldsOf(tool)
	if len(fields) == 0 || !strings.Contains(args, "/") && !strings.Contains(args, rootToken) && !strings.Contains(args, `\u003croot`) {
		return args
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber() // numbers stay exactly as sent
	if dec.Decode(&m) != nil || dec.More() || m == nil {
		return args
	}
	changed := false
	for _, k := range fields {
		if v, ok := m[k].(string); ok {
			if nv, ok := f(v); ok {
				m[k], changed = nv, true
			}
		}
	}
	if !changed {
		return args
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<root>", readable
	if enc.Encode(m) != nil {
		return args
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// absScript gives the replay root to the model's calls in a recorded
// script.
func absScript(turns []scripted.Turn, root []rootForm) {
	for i := range turns {
		for j := range turns[i].Calls {
			c := &turns[i].Calls[j]
			if len(c.Args) > 0 {
				c.Args = json.RawMessage(absArgs(c.Name, string(c.Args), root))
			}
		}
	}
}

// Volatile lines (proto.Volatile): masked in both texts before they
// are compared, when the replay cannot have restored them.

// masked is text with the value of every volatile line of tool's answers
// replaced, those a self-contained replay restores only when restored is
// false.
func masked(tool, text string, restored bool) string {
	return strings.Join(maskLines(tool, strings.Split(text, "\n"), false, restored), "\n")
}

// maskLines masks the volatile lines of an answer's lines, or of a
// review's (review).
func maskLines(tool string, lines []string, review, restored bool) []string {
	vs := toolspec.VolatileOf(tool)
	if len(vs) == 0 {
		return lines
	}
	lines = append([]string(nil), lines...)
	has := func(l string) bool {
		for _, x := range lines {
			if x == l {
				return true
			}
		}
		return false
	}
	for _, v := range vs {
		if v.Review != review || (v.Restored && restored) || (v.When != "" && !has(v.When)) {
			continue
		}
		if v.Pattern != "" {
			re := regexp.MustCompile(v.Pattern)
			for i, l := range lines {
				if m := re.FindStringSubmatchIndex(l); m != nil && m[2] >= 0 {
					lines[i] = l[:m[2]] + "(volatile)" + l[m[3]:]
				}
			}
			continue
		}
		for i, l := range lines {
			if !strings.HasPrefix(l, v.Prefix) {
				continue
			}
			if v.Word == "" {
				lines[i] = v.Prefix + "(volatile)"
				continue
			}
			if at := strings.Index(l, v.Word); at >= 0 {
				rest := l[at+len(v.Word):]
				end := strings.IndexByte(rest, ' ')
				if end < 0 {
					end = len(rest)
				}
				lines[i] = l[:at+len(v.Word)] + "(volatile)" + rest[end:]
			}
		}
	}
	return lines
}

// sameReview reports whether a recorded review and a replayed one are the
// same, their volatile lines compared by the tool's declaration.
func sameReview(tool string, a, b []string, restored bool) bool {
	return slices.Equal(a, b) || slices.Equal(maskLines(tool, a, true, restored), maskLines(tool, b, true, restored))
}

// contrib is one part of a recording and its size, for the message that
// says why a recording was not written.
type contrib struct {
	what string
	n    int64
}

// maxContribs is how many of the largest parts that message names.
const maxContribs = 5

// note keeps the largest parts seen (a part counted again, a file's name
// and then its content, is one part).
func (r *Recorder) note(what string, n int) {
	c := contrib{what, int64(n)}
	for i, x := range r.top {
		if x.what == what {
			c.n += x.n
			r.top = append(r.top[:i], r.top[i+1:]...)
			break
		}
	}
	i := sort.Search(len(r.top), func(i int) bool { return r.top[i].n < c.n })
	if i >= maxContribs {
		return
	}
	r.top = append(r.top, contrib{})
	copy(r.top[i+1:], r.top[i:])
	r.top[i] = c
	if len(r.top) > maxContribs {
		r.top = r.top[:maxContribs]
	}
}

func (r *Recorder) largest() string {
	var parts []string
	for _, c := range r.top {
		parts = append(parts, fmt.Sprintf("%s (%s)", c.what, proto.FormatSize(c.n)))
	}
	return strings.Join(parts, ", ")
}
