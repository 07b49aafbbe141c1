package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/agent"
)

func conv(qs ...string) []agent.Message {
	var m []agent.Message
	for _, q := range qs {
		m = append(m, agent.Message{Role: "user", Content: q}, agent.Message{Role: "assistant", Content: "answer to " + q})
	}
	return m
}

func TestSaveLoad(t *testing.T) {
	st := NewStore(filepath.Join(t.TempDir(), "s"), nil)
	os.Mkdir(st.Path(), 0o755) // made by someone else: made private on save
	s := st.New("/r", "qwen3")
	msgs := append(conv("first?", "second?"), agent.Message{Role: "tool", Content: "x", ToolName: "read_file", ToolCallID: "c1"})
	if _, err := st.Save(s, msgs); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != "/r" || got.Model != "qwen3" || got.Turns != 2 || got.First != "first?" || len(got.Messages) != len(msgs) || !reflect.DeepEqual(got.Messages, msgs) {
		t.Errorf("loaded %+v", got)
	}
	for p, want := range map[string]os.FileMode{st.Path(): 0o700, st.file(s.ID): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	if h, err := st.Last("/r"); err != nil || h.ID != s.ID {
		t.Errorf("Last = %v, %v", h.ID, err)
	}
	if _, err := st.Last("/other"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Last of another root: %v", err)
	}
	if _, err := st.Load("../" + s.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a path as ID: %v", err)
	}
}

// A session over MaxBytes loses its oldest questions from the saved copy,
// whole, and says how many; the count survives a load and a save again.
func TestSizeBound(t *testing.T) {
	st := NewStore(t.TempDir(), nil)
	s := st.New("/r", "m")
	big := strings.Repeat("x", MaxBytes/3)
	msgs := conv("q1 "+big, "q2 "+big, "q3 "+big, "q4?")
	dropped, err := st.Save(s, msgs)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(st.file(s.ID))
	if dropped != 2 || fi.Size() > MaxBytes {
		t.Fatalf("dropped %d, file %d bytes; want 2 dropped, at most %d", dropped, fi.Size(), MaxBytes)
	}
	got, err := st.Load(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Turns != 4 || got.Dropped != 2 || !strings.HasPrefix(got.Messages[0].Content, "q3 ") || !strings.HasPrefix(got.First, "q1 ") {
		t.Errorf("loaded turns %d dropped %d first message %.5q first %.5q", got.Turns, got.Dropped, got.Messages[0].Content, got.First)
	}
	// Resumed: one more question; the two dropped before stay counted.
	if _, err := st.Save(got, append(got.Messages, conv("q5?")...)); err != nil {
		t.Fatal(err)
	}
	again, _ := st.Load(s.ID)
	if again.Turns != 5 || again.Dropped != 2 {
		t.Errorf("after a resumed save: turns %d, dropped %d; want 5, 2", again.Turns, again.Dropped)
	}
	// One question alone too large: not saved, and said.
	if _, err := st.Save(st.New("/r", "m"), conv(strings.Repeat("y", MaxBytes))); err == nil {
		t.Error("a session larger than MaxBytes in one question was saved")
	}
	// A file over the bound is refused on load.
	id := "20200101-000000-000000"
	os.WriteFile(st.file(id), []byte(strings.Repeat(" ", MaxBytes+1)), 0o600)
	if _, err := st.Load(id); !errors.Is(err, ErrCorrupt) {
		t.Errorf("oversized file: %v", err)
	}
}

// Saving deletes sessions unused for MaxAge and the oldest beyond
// MaxCount, never the one saved.
func TestPrune(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st := NewStore(t.TempDir(), func() time.Time { return now })
	os.MkdirAll(st.Path(), 0o700)
	old := "20261001-000000-000001"
	os.WriteFile(st.file(old), []byte("{}\n"), 0o600)
	os.Chtimes(st.file(old), now.Add(-MaxAge-time.Hour), now.Add(-MaxAge-time.Hour))
	var ids []string
	for i := range MaxCount + 3 {
		id := fmt.Sprintf("20261130-000000-%06x", i+16)
		ids = append(ids, id)
		os.WriteFile(st.file(id), []byte("{}\n"), 0o600)
		at := now.Add(-time.Duration(MaxCount+3-i) * time.Minute) // ids[0] oldest
		os.Chtimes(st.file(id), at, at)
	}
	s := st.New("/r", "m")
	if _, err := st.Save(s, conv("q?")); err != nil {
		t.Fatal(err)
	}
	files, _ := st.files()
	if len(files) != MaxCount {
		t.Errorf("%d sessions kept, want %d", len(files), MaxCount)
	}
	exists := func(id string) bool { _, err := os.Stat(st.file(id)); return err == nil }
	if exists(old) {
		t.Error("a session older than MaxAge was kept")
	}
	if !exists(s.ID) {
		t.Error("the session just saved was deleted")
	}
	for _, id := range ids[:4] {
		if exists(id) {
			t.Errorf("%s, among the oldest beyond MaxCount, was kept", id)
		}
	}
	if !exists(ids[4]) || !exists(ids[len(ids)-1]) {
		t.Error("a session within the bounds was deleted")
	}
}

func TestDir(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		getenv func(string) string
		goos   string
		want   string // "" for an error
	}{
		{env("XDG_STATE_HOME", "/st", "HOME", "/h"), "linux", "/st/moat/sessions"},
		{env("XDG_STATE_HOME", "rel", "HOME", "/h"), "linux", "/h/.local/state/moat/sessions"},
		{env("HOME", "/h"), "linux", "/h/.local/state/moat/sessions"},
		{env("HOME", "/h"), "darwin", "/h/Library/Application Support/moat/sessions"},
		{env("XDG_STATE_HOME", "/st", "HOME", "/h"), "darwin", "/st/moat/sessions"},
		{env(), "linux", ""},
		{env("HOME", "rel"), "linux", ""},
	}
	for _, c := range cases {
		got, err := Dir(c.getenv, c.goos)
		if got != filepath.FromSlash(c.want) || (err != nil) != (c.want == "") {
			t.Errorf("Dir on %s = %q, %v; want %q", c.goos, got, err, c.want)
		}
	}
}

// Resolve takes a whole ID or the start of exactly one, however short.
func TestResolve(t *testing.T) {
	st := NewStore(t.TempDir(), nil)
	os.MkdirAll(st.Path(), 0o700)
	for _, id := range []string{"20261130-101010-aaaaaa", "20261201-101010-bbbbbb", "20261201-111111-cccccc"} {
		os.WriteFile(st.file(id), []byte("{}\n"), 0o600)
	}
	for typed, want := range map[string]string{
		"20261130-101010-aaaaaa": "20261130-101010-aaaaaa",
		"20261130":               "20261130-101010-aaaaaa",
		"202611":                 "20261130-101010-aaaaaa", // shorter than the date: still only one
		"2026113":                "20261130-101010-aaaaaa",
		"20261201-11":            "20261201-111111-cccccc",
		"20261201-101010-bbbbbb": "20261201-101010-bbbbbb",
		"20261202-000000-000000": "20261202-000000-000000", // a whole ID: Load says whether it exists
	} {
		if got, err := st.Resolve(typed); got != want || err != nil {
			t.Errorf("Resolve(%q) = %q, %v; want %q", typed, got, err, want)
		}
	}
	for _, typed := range []string{"3", "20261203", "../20261130", "20261130-101010-aaaaaa.jsonl", ""} {
		if _, err := st.Resolve(typed); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q): %v, want ErrNotFound", typed, err)
		}
	}
	if _, err := st.Resolve("20261201"); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "20261201-101010-bbbbbb, 20261201-111111-cccccc") {
		t.Errorf("an ambiguous start: %v", err)
	}
	if _, err := st.Resolve("2"); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "is the start of 3 session IDs") {
		t.Errorf("a one-character start of three: %v", err)
	}
}
