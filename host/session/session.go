// Package session keeps moat chat's conversations on disk, so that a
// later chat can go on with one (moat chat --continue, --resume ID) and
// moat sessions can list them.
//
// Sessions live in the user's state folder ([Dir]), never in the sandbox
// root: they hold what the model read, and a model must not find earlier
// conversations among the files it explores. Each session is one file,
// ID.jsonl, written with private permissions (folder 0700, file 0600) and
// replaced atomically after every turn: a header line ([Header]), then
// one JSON message per line, as the transcript writes them. Their size
// and age are bounded ([MaxBytes], [MaxAge], [MaxCount]).
package session

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/atomicfile"
)

// Bounds on what is kept. A session larger than MaxBytes loses its oldest
// questions (and everything that answered them) from the saved copy; a
// session not used for MaxAge is deleted, and so are the oldest beyond
// MaxCount, whenever a session is saved.
const (
	MaxBytes = 8 << 20
	MaxAge   = 30 * 24 * time.Hour
	MaxCount = 100
)

// maxHeaderBytes bounds the first line, which listing reads of every file.
const maxHeaderBytes = 64 << 10

// version is the file format, the header's "moat_session".
const version = 1

// ErrNotFound is a session ID with no file.
var ErrNotFound = errors.New("no such session")

// ErrCorrupt is a session file moat cannot read back.
var ErrCorrupt = errors.New("session file is damaged")

// Header is a session file's first line: what moat sessions lists.
type Header struct {
	Version int       `json:"moat_session"`
	ID      string    `json:"id"`
	Root    string    `json:"root"` // the sandbox root, absolute, symlinks resolved
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Model   string    `json:"model,omitempty"`
	First   string    `json:"first"`             // the first question, cut short
	Turns   int       `json:"turns"`             // questions asked, dropped ones included
	Dropped int       `json:"dropped,omitempty"` // oldest questions left out to stay within MaxBytes
}

// Saved is a saved conversation: the header and the messages after
// the system prompt (each chat builds its own from its flags).
type Saved struct {
	Header
	Messages []agent.Message
	before   int // questions the saved copy had dropped when it was loaded
}

// Store is the folder sessions are kept in.
type Store struct {
	dir string
	now func() time.Time
}

// NewStore returns the store in dir (see [Dir]); nothing is created until
// a session is saved. now is the clock, nil for time.Now.
func NewStore(dir string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{dir: dir, now: now}
}

// Path is the store's folder.
func (st *Store) Path() string { return st.dir }

// validID reports whether id is one New makes, "20060102-150405-a1b2c3":
// sortable by time, random enough to be unique, and never a path.
func validID(id string) bool {
	if len(id) != 22 || id[8] != '-' || id[15] != '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case i == 8 || i == 15:
		case i < 15 && '0' <= c && c <= '9':
		case i > 15 && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// New starts a session for root, not yet saved.
func (st *Store) New(root, model string) *Saved {
	var rnd [3]byte
	rand.Read(rnd[:])
	now := st.now().UTC()
	return &Saved{Header: Header{
		Version: version, Root: root, Model: model, Created: now, Updated: now,
		ID: now.Format("20060102-150405") + "-" + hex.EncodeToString(rnd[:]),
	}}
}

func (st *Store) file(id string) string { return filepath.Join(st.dir, id+".jsonl") }

// Save writes s with msgs as its conversation (the history without the
// system prompt), replacing the saved copy, and then deletes sessions past
// the age and count bounds. It returns the number of questions left out of
// the saved copy, in all, to keep it within MaxBytes.
func (st *Store) Save(s *Saved, msgs []agent.Message) (int, error) {
	s.Messages, s.Dropped, s.Turns = msgs, s.before, s.before
	for _, m := range msgs {
		if m.Role == "user" {
			if s.First == "" {
				s.First = cut(m.Content, 200)
			}
			s.Turns++
		}
	}
	s.Updated = st.now().UTC()
	data, err := s.encode()
	if err != nil {
		return s.Dropped, err
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return s.Dropped, fmt.Errorf("saving the session: %w", err)
	}
	if err := os.Chmod(st.dir, 0o700); err != nil { // private even if made by another program
		return s.Dropped, fmt.Errorf("saving the session: %w", err)
	}
	// Synced before the rename: a crash leaves the old copy or the new one.
	if err := atomicfile.Write(st.file(s.ID), data, true); err != nil {
		return s.Dropped, fmt.Errorf("saving the session: %w", err)
	}
	st.prune(s.ID)
	return s.Dropped, nil
}

// encode is the file: the header line, then a line per message. When
// that is over MaxBytes, the oldest questions are left out, each with
// every message up to the next question, and counted in Dropped. Each
// message is encoded once, however many are left out.
func (s *Saved) encode() ([]byte, error) {
	lines := make([][]byte, len(s.Messages))
	size := 0
	for i, m := range s.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		lines[i] = append(b, '\n')
		size += len(lines[i])
	}
	start := 0
	for {
		head, err := json.Marshal(s.Header)
		if err != nil {
			return nil, err
		}
		if len(head)+1+size <= MaxBytes {
			s.Messages = s.Messages[start:]
			return append(append(head, '\n'), bytes.Join(lines[start:], nil)...), nil
		}
		next := start + 1 // the oldest question and what answered it
		for next < len(s.Messages) && s.Messages[next].Role != "user" {
			next++
		}
		if next >= len(s.Messages) {
			return nil, fmt.Errorf("session %s: the latest question alone is more than the %d MiB a session may hold; not saved", s.ID, MaxBytes>>20)
		}
		for _, l := range lines[start:next] {
			size -= len(l)
		}
		start = next
		s.Dropped++
	}
}

// prune deletes sessions not saved for MaxAge, and the oldest beyond
// MaxCount, never keep. Failures are ignored: pruning is housekeeping.
func (st *Store) prune(keep string) {
	files, _ := st.files()
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	limit := st.now().Add(-MaxAge)
	kept := 1 // keep itself
	for _, f := range files {
		if f.id == keep {
			continue
		}
		if f.mod.Before(limit) || kept >= MaxCount {
			os.Remove(st.file(f.id))
			continue
		}
		kept++
	}
}

type entry struct {
	id  string
	mod time.Time
}

// files lists the session files in the store; a missing folder holds none.
func (st *Store) files() ([]entry, error) {
	des, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".jsonl")
		if !ok || !validID(id) || !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		out = append(out, entry{id, info.ModTime()})
	}
	return out, nil
}

// Listed is one session as moat sessions shows it: its header, or why it
// could not be read.
type Listed struct {
	Header
	Err error
}

// List returns every saved session, the most recently used first, reading
// only each file's header line.
func (st *Store) List() ([]Listed, error) {
	files, err := st.files()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", st.dir, err)
	}
	out := make([]Listed, 0, len(files))
	for _, f := range files {
		h, err := st.header(f.id)
		if err != nil {
			h = Header{ID: f.id, Updated: f.mod}
		}
		out = append(out, Listed{h, err})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// Last returns the header of the most recently used session of root.
func (st *Store) Last(root string) (Header, error) {
	list, err := st.List()
	if err != nil {
		return Header{}, err
	}
	for _, l := range list {
		if l.Err == nil && l.Root == root {
			return l.Header, nil
		}
	}
	return Header{}, ErrNotFound
}

func (st *Store) header(id string) (Header, error) {
	f, err := os.Open(st.file(id))
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxHeaderBytes), maxHeaderBytes).ReadSlice('\n')
	if err != nil {
		return Header{}, corrupt(1, errors.New("no header line"))
	}
	return parseHeader(line, id)
}

func parseHeader(line []byte, id string) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, corrupt(1, err)
	}
	switch {
	case h.Version != version:
		return Header{}, corrupt(1, fmt.Errorf("not a moat session of format %d", version))
	case h.ID != id:
		return Header{}, corrupt(1, fmt.Errorf("its header names session %q", h.ID))
	case h.Root == "":
		return Header{}, corrupt(1, errors.New("its header names no root"))
	}
	return h, nil
}

// Resolve turns what a person typed for --resume into a session ID: the
// ID itself, or the start of exactly one saved session's ID, however short
// ("2026" when only one ID starts so). ErrNotFound when none matches; an
// error naming the matches when several do.
func (st *Store) Resolve(typed string) (string, error) {
	if validID(typed) {
		return typed, nil
	}
	if typed == "" || strings.Trim(typed, "0123456789abcdef-") != "" {
		return "", ErrNotFound
	}
	files, err := st.files()
	if err != nil {
		return "", err
	}
	var ids []string
	for _, f := range files {
		if strings.HasPrefix(f.id, typed) {
			ids = append(ids, f.id)
		}
	}
	switch len(ids) {
	case 0:
		return "", ErrNotFound
	case 1:
		return ids[0], nil
	}
	sort.Strings(ids)
	if len(ids) > 5 {
		ids = append(ids[:5], "...")
	}
	return "", fmt.Errorf("%s is the start of %d session IDs (%s); give more of it", typed, len(ids), strings.Join(ids, ", "))
}

// Load reads a session back, whole.
func (st *Store) Load(id string) (*Saved, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%q is not a session ID (they look like 20260102-150405-a1b2c3): %w", id, ErrNotFound)
	}
	f, err := os.Open(st.file(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%w: more than the %d MiB a session may hold", ErrCorrupt, MaxBytes>>20)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	h, err := parseHeader(lines[0], id)
	if err != nil {
		return nil, err
	}
	s := &Saved{Header: h, before: h.Dropped}
	for i, l := range lines[1:] {
		var m agent.Message
		if err := json.Unmarshal(l, &m); err != nil {
			return nil, corrupt(i+2, err)
		}
		switch {
		case m.Role != "user" && m.Role != "assistant" && m.Role != "tool":
			return nil, corrupt(i+2, fmt.Errorf("a message with role %q", m.Role))
		case i == 0 && m.Role != "user":
			return nil, corrupt(i+2, errors.New("the conversation does not start with a question"))
		}
		s.Messages = append(s.Messages, m)
	}
	return s, nil
}

func corrupt(line int, err error) error {
	return fmt.Errorf("%w (line %d: %v)", ErrCorrupt, line, err)
}

// cut shortens s to n runes on one line, marking the cut.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
