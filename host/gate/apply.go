package gate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path"
	"strings"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/display"
)

// snapshot is what the gate saw of a target before asking: enough to tell
// whether anything changed by the time the answer comes.
type snapshot struct {
	newDirs []string    // parent folders that do not exist yet, outermost first
	exists  bool        // the target exists
	info    fs.FileInfo // the target's Lstat, when it exists
	data    []byte      // the target's content, when it exists
}

func (s *snapshot) sum() string {
	if !s.exists {
		return ""
	}
	return sha256hex(s.data)
}

// same reports whether two snapshots describe the same state on disk.
func (s *snapshot) same(t *snapshot) bool {
	if s.exists != t.exists || strings.Join(s.newDirs, "\x00") != strings.Join(t.newDirs, "\x00") {
		return false
	}
	if !s.exists {
		return true
	}
	return os.SameFile(s.info, t.info) && s.info.Mode() == t.info.Mode() && string(s.data) == string(t.data)
}

// inspect checks everything on the way to rel without following any
// symlink, and reads the target when it exists. rel has passed checkPath.
func (g *Gate) inspect(rel string) (*snapshot, error) {
	s := &snapshot{}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		if len(s.newDirs) > 0 { // below a missing folder everything is missing
			s.newDirs = append(s.newDirs, dir)
			continue
		}
		fi, err := g.root.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.newDirs = append(s.newDirs, dir)
		case err != nil:
			return nil, refusal(fs.ErrInvalid, "", "cannot be checked: %s", rootError(err))
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, refusal(ErrSymlink, "Propose the path inside the real folder instead.", "is under %s, a symbolic link (moat never writes through a linked folder, even one that stays inside the workspace)", dir)
		case !fi.IsDir():
			return nil, refusal(ErrNotRegular, "", "cannot be created: %s is not a folder", dir)
		}
	}
	if err := g.gitDir(rel); err != nil { // the folders above are real folders now
		return nil, err
	}
	if len(s.newDirs) > 0 {
		return s, nil
	}
	fi, err := g.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, refusal(fs.ErrInvalid, "", "cannot be checked: %s", rootError(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, refusal(ErrSymlink, "Propose the path of the file it points to, if that is inside the workspace.", "is a symbolic link (moat never writes through a link, dangling or not)")
	case fi.IsDir():
		return nil, refusal(ErrNotRegular, "Name a file inside it.", "is a folder, not a file")
	case !fi.Mode().IsRegular():
		return nil, refusal(ErrNotRegular, "", "is not a regular file (%s); moat only writes regular files", fi.Mode().Type())
	case fi.Size() > MaxFileBytes:
		return nil, refusal(ErrTooLarge, "Ask the user to change this file.", "is %d bytes, more than the %d a person can review at the terminal", fi.Size(), MaxFileBytes)
	}
	if n, ok := linkCount(fi); !ok {
		return nil, refusal(ErrHardLink, "Ask the user to change this file.", "cannot be checked for hard links on this system, so moat will not replace it")
	} else if n > 1 {
		return nil, refusal(ErrHardLink, "Ask the user to change this file.", "has %d hard links (another name for it may be outside the workspace)", n)
	}
	if g.audit != nil && g.audit.is(fi) {
		return nil, refusal(ErrDenied, "", "is moat's audit log, which proposals never write")
	}
	data, err := g.read(rel, fi)
	if err != nil {
		return nil, err
	}
	s.exists, s.info, s.data = true, fi, data
	return s, nil
}

// read reads the target and makes sure the file read is the one inspected.
// The open does not wait (openNonblock): a FIFO swapped in between the
// Lstat and the open would otherwise block it until some writer came,
// and with it every later proposal. What was opened must be a regular
// file, the one inspected.
func (g *Gate) read(rel string, want fs.FileInfo) ([]byte, error) {
	if g.beforeOpen != nil {
		g.beforeOpen(rel)
	}
	f, err := g.root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, refusal(ErrChanged, "", "could not be read: %s", rootError(err))
	}
	defer f.Close()
	got, err := f.Stat()
	switch {
	case err == nil && !got.Mode().IsRegular():
		return nil, refusal(ErrChanged, "Look at it again and propose the change again.", "changed while moat was reading it: it is not a regular file now (%s)", got.Mode().Type())
	case err != nil || !os.SameFile(got, want):
		return nil, refusal(ErrChanged, "Read it again and propose the change again.", "changed while moat was reading it")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, refusal(fs.ErrInvalid, "", "could not be read: %s", rootError(err))
	}
	if len(data) > MaxFileBytes {
		return nil, refusal(ErrTooLarge, "Ask the user to change this file.", "is more than the %d bytes a person can review at the terminal", MaxFileBytes)
	}
	return data, nil
}

// editForm checks that a propose_edit's arguments take one form: the
// single replacement (old_text and new_text) or the list (edits), not
// both. It returns the problem in words for the model, or "".
func editForm(args json.RawMessage) string {
	var has map[string]json.RawMessage
	if json.Unmarshal(args, &has) != nil {
		return "propose_edit arguments must be a JSON object"
	}
	_, list := has["edits"]
	_, old := has["old_text"]
	_, repl := has["new_text"]
	_, all := has["replace_all"]
	switch {
	case list && (old || repl || all):
		return "propose_edit takes either old_text and new_text (one replacement) or edits (several), not both; put every replacement in edits"
	case list:
		return ""
	case !old && !repl:
		return `propose_edit needs "old_text" and "new_text" (strings), or "edits" (a list of them)`
	case !old:
		return `propose_edit needs "old_text" (a string)`
	case !repl:
		return `propose_edit needs "new_text" (a string)`
	}
	return ""
}

// applyEdit computes the new content of a propose_edit: its one
// replacement, or each of its edits in order on the result of the ones
// before. Nothing is kept of a list that fails part way: all or none. It
// returns the problem, in words for the model, when the edit cannot be
// made.
func applyEdit(p *proposal, s *snapshot, a proto.ProposeEditArgs) string {
	if !s.exists {
		return fmt.Sprintf("%s does not exist; use propose_write to create a new file", p.shown)
	}
	edits := a.Edits
	if edits == nil {
		edits = []proto.Edit{{OldText: a.OldText, NewText: a.NewText, ReplaceAll: a.ReplaceAll}}
	} else if len(edits) == 0 {
		return "edits is empty; give at least one {old_text, new_text}"
	} else if len(edits) > proto.MaxEdits {
		return fmt.Sprintf("edits holds %d edits, more than the %d one proposal may; split the change into several proposals", len(edits), proto.MaxEdits)
	}
	text, total := string(s.data), 0
	for i, e := range edits {
		next, n, oversize, msg := replace(text, e, p.shown)
		if oversize > 0 {
			p.oversize = oversize // refused as too large by the caller
			return ""
		}
		if msg != "" {
			if a.Edits == nil {
				return msg
			}
			after := ""
			if i > 0 {
				after = fmt.Sprintf(" (matched against the file as the %d edit%s before it left it)", i, plural(i))
			}
			return fmt.Sprintf("edits[%d] (edit %d of %d): %s%s; none of the edits was made", i, i+1, len(edits), msg, after)
		}
		text, total = next, total+n
	}
	p.content, p.edits = []byte(text), total
	return ""
}

// replace makes one replacement in text, the only place an edit is
// computed: the single edit and each of a list come through here. It
// returns the new text and how many occurrences were replaced, or the
// problem in words for the model, or (oversize > 0) the size the text
// would have grown to past MaxFileBytes, without building it.
func replace(text string, e proto.Edit, shown string) (next string, n, oversize int, msg string) {
	if e.OldText == "" {
		return "", 0, 0, "old_text is empty; copy the exact text to replace from the file (read_file shows it), or use propose_write to replace the whole file"
	}
	if e.OldText == e.NewText {
		return "", 0, 0, "old_text and new_text are the same; there is nothing to change"
	}
	n = strings.Count(text, e.OldText)
	switch {
	case n == 0:
		return "", 0, 0, fmt.Sprintf("old_text not found in %s; it must match the file exactly, including spaces, tabs and line endings. Read the file again and copy the text", shown)
	case n > 1 && !e.ReplaceAll:
		return "", 0, 0, fmt.Sprintf("old_text occurs %d times in %s (at lines %s); include more of the surrounding text so it matches once, or set replace_all to replace all %d", n, shown, matchLines(text, e.OldText), n)
	}
	if !e.ReplaceAll {
		n = 1
	}
	if size, ok := EditSize(len(text), n, len(e.OldText), len(e.NewText)); !ok {
		return "", 0, size, "" // refused as too large, with no content built
	}
	if e.ReplaceAll {
		return strings.ReplaceAll(text, e.OldText, e.NewText), n, 0, ""
	}
	return strings.Replace(text, e.OldText, e.NewText, 1), 1, 0, ""
}

// EditSize is the size of a file of size bytes after n replacements of
// old bytes by new bytes, and whether that is within [MaxFileBytes]. It is
// computed before any replacement is made, so a proposal whose result
// would be huge (a million one-byte matches, each replaced by a MiB)
// allocates nothing proportional to it; a size past what an int holds is
// math.MaxInt. Call it for every edit, on the size the edits before it
// left.
func EditSize(size, n, old, new int) (int, bool) {
	if n <= 0 || new <= old {
		s := size - n*(old-new)
		return s, s <= MaxFileBytes
	}
	hi, grow := bits.Mul64(uint64(n), uint64(new-old))
	if hi != 0 || grow > uint64(math.MaxInt-size) {
		return math.MaxInt, false
	}
	s := size + int(grow)
	return s, s <= MaxFileBytes
}

// matchLines lists the line numbers where each (non-overlapping) match of
// sub in s starts, at most ten of them.
func matchLines(s, sub string) string {
	var lines []string
	line, pos := 1, 0
	for len(lines) < 10 {
		i := strings.Index(s[pos:], sub)
		if i < 0 {
			break
		}
		line += strings.Count(s[pos:pos+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(sub, "\n")
		pos += i + len(sub)
	}
	out := strings.Join(lines, ", ")
	if strings.Count(s, sub) > len(lines) {
		out += ", ..."
	}
	return out
}

// apply writes p after approval. The state on disk must still be the one
// in s; new folders are created one at a time, the content goes to a
// temporary file beside the target and is renamed over it.
func (g *Gate) apply(p *proposal, s *snapshot) (string, error) {
	now, err := g.inspect(p.rel)
	if err != nil {
		return "", refusal(ErrChanged, "Look at it again and propose the change again.", "changed on disk while the user was reviewing the proposal (now it %s)", err)
	}
	if !s.same(now) {
		return "", refusal(ErrChanged, "Read it again and propose the change again.", "changed on disk while the user was reviewing the proposal")
	}
	for _, d := range s.newDirs {
		if err := g.root.Mkdir(d, 0o755); err != nil {
			return "", refusal(ErrChanged, "", "could not be written: creating folder %s: %s", d, rootError(err))
		}
		fi, err := g.root.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
			return "", refusal(ErrChanged, "", "could not be written: folder %s changed while it was being created", d)
		}
	}
	mode := fs.FileMode(0o644)
	if s.exists {
		mode = s.info.Mode().Perm()
	}
	tmp, err := g.writeTemp(path.Dir(p.rel), p.content, mode)
	if err != nil {
		return "", err
	}
	// Last look before the rename: the rename replaces whatever entry is
	// there (it never follows a link), but a target that changed since the
	// snapshot must not be replaced.
	last, err := g.root.Lstat(p.rel)
	switch {
	case s.exists && (err != nil || !os.SameFile(last, s.info) || last.Mode() != s.info.Mode()),
		!s.exists && !errors.Is(err, fs.ErrNotExist):
		g.root.Remove(tmp)
		return "", refusal(ErrChanged, "Read it again and propose the change again.", "changed on disk while it was being written")
	}
	if err := g.root.Rename(tmp, p.rel); err != nil {
		g.root.Remove(tmp)
		return "", refusal(fs.ErrInvalid, "", "could not be written: %s", rootError(err))
	}
	// Make the rename durable; not waiting on a FIFO swapped in for the folder.
	if d, err := g.root.OpenFile(path.Dir(p.rel), os.O_RDONLY|openNonblock, 0); err == nil {
		d.Sync()
		d.Close()
	}
	return sha256hex(p.content), nil
}

// tempPrefix names the gate's temporary files, so a person who finds one
// after a crash knows where it came from.
const tempPrefix = ".moat-tmp-"

// writeTemp writes content to a new file in dir (root-relative) and
// returns its root-relative name. O_EXCL: an existing name, including a
// planted symlink, is an error, never followed.
func (g *Gate) writeTemp(dir string, content []byte, mode fs.FileMode) (string, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	name := path.Join(dir, tempPrefix+hex.EncodeToString(rnd[:]))
	f, err := g.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", refusal(fs.ErrInvalid, "", "could not be written: creating a temporary file: %s", rootError(err))
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Chmod(mode) // exactly the old mode, whatever the umask
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		g.root.Remove(name)
		return "", refusal(fs.ErrInvalid, "", "could not be written: %s", rootError(err))
	}
	return name, nil
}

// rootError describes an os.Root error without the host's absolute path:
// PathErrors from os.Root carry the root-relative name, but be sure.
func rootError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return display.Line(pe.Err.Error())
	}
	return display.Line(err.Error())
}
