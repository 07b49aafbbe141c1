package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moatdev/moat/host/toolspec"
)

// Each reply is trimmed of blank space at both ends and ends with one
// newline, however the chunks fall.
func TestStreamTrimsEachReply(t *testing.T) {
	var out bytes.Buffer
	s := streamSanitizer{w: &out}
	for _, c := range []string{"\n\n  ", " Para", " one.\n", "\n", "Para two.", "\n\n ", "\n"} {
		s.Write(c)
	}
	s.Flush()
	s.Write("  \n")
	s.Flush() // a blank reply writes nothing
	s.Write("next")
	s.Flush()
	if want := "Para one.\n\nPara two.\nnext\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// The before hook runs once per reply, before its first byte, and not for
// a reply of blank space only.
func TestStreamBeforeHook(t *testing.T) {
	var out bytes.Buffer
	calls := 0
	s := streamSanitizer{w: &out, before: func() {
		calls++
		out.WriteString("|")
	}}
	s.Write("\n")
	if calls != 0 {
		t.Fatal("hook ran for blank space")
	}
	s.Write("a")
	s.Write("b")
	s.Flush()
	s.Write("c")
	s.Flush()
	if calls != 2 || out.String() != "|ab\n|c\n" {
		t.Errorf("calls=%d out=%q", calls, out.String())
	}
}

func TestWrap(t *testing.T) {
	cases := []struct {
		width  int
		chunks []string
		want   string
	}{
		{20, []string{"The quick brown fox jumps over the lazy dog."}, "The quick brown fox\njumps over the lazy\ndog.\n"},
		// Split mid-word: the word is held until it is complete.
		{20, []string{"The qu", "ick brown f", "ox jum", "ps over the lazy dog."}, "The quick brown fox\njumps over the lazy\ndog.\n"},
		// Newlines in the text reset the column; indentation is kept.
		{10, []string{"a\n  bb cc dd\nee"}, "a\n  bb cc dd\nee\n"},
		// A word longer than a line is broken where the line ends.
		{8, []string{"see https://example.com/x ok"}, "see\nhttps://\nexample.\ncom/x ok\n"},
		// Exactly the width fits.
		{5, []string{"abcde fghij"}, "abcde\nfghij\n"},
		// Escapes count as what is printed.
		{10, []string{"x \x1b[2K y"}, "x \\x1b[2K\ny\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		s := streamSanitizer{w: &out, wrap: wrapper{width: c.width}}
		for _, ch := range c.chunks {
			s.Write(ch)
		}
		s.Flush()
		if out.String() != c.want {
			t.Errorf("width %d %q:\ngot  %q\nwant %q", c.width, c.chunks, out.String(), c.want)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if n := len([]rune(l)); n > c.width {
				t.Errorf("line %q is %d columns, more than %d", l, n, c.width)
			}
		}
	}
}

// syncBuffer is a bytes.Buffer safe to read while the loop writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor polls until cond holds, failing after a generous time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// The answer reaches the stream while the server is still sending it, and
// cancelling (Ctrl-C) keeps what was written and ends its line.
func TestStreamArrivesBeforeReplyEnds(t *testing.T) {
	for _, which := range []wire{native, compat} {
		t.Run(string(which), func(t *testing.T) {
			// "hang": the server sends the first chunk, then waits for
			// the client to give up.
			srv := script(t, `{"turns":[{"text":"Partial answer","fail":"hang"}]}`)
			var stream syncBuffer
			s := New(Config{Backend: backend(t, which, srv.URL), Tools: newFakeTools(t, nil), Model: "qwen3", Stream: &stream})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.Ask(ctx, "hi")
				done <- err
			}()
			waitFor(t, "the first chunk", func() bool { return stream.String() == "Part" })
			select {
			case err := <-done:
				t.Fatalf("Ask returned before the reply was complete: %v", err)
			default:
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if got := stream.String(); got != "Part\n" {
				t.Errorf("stream after cancel = %q, want the partial text and a newline", got)
			}
		})
	}
}

// recordWaiting logs Start and Stop in the order they happen relative to
// the stream.
type recordWaiting struct{ log *syncBuffer }

func (r recordWaiting) Start() { r.log.Write([]byte("[start]")) }
func (r recordWaiting) Stop()  { r.log.Write([]byte("[stop]")) }

// The wait is shown for each reply and ended before its first text and
// before any activity line.
func TestWaitingStopsBeforeText(t *testing.T) {
	var log syncBuffer
	srv := script(t, readAndAnswer)
	s := New(Config{Backend: backend(t, native, srv.URL), Tools: newFakeTools(t, map[string]string{"notes.txt": "buy milk\n"}),
		Model: "qwen3", Stream: &log, Activity: &log, Waiting: recordWaiting{&log}})
	if _, err := s.Ask(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	want := "[start][stop]Let me look.[stop]\n→ read_file notes.txt (9 B)\n[start][stop]The notes say: buy milk.[stop]\n"
	if log.String() != want {
		t.Errorf("got  %q\nwant %q", log.String(), want)
	}
}

func TestSpinner(t *testing.T) {
	var out syncBuffer
	sp := NewSpinner(&out, "waiting for qwen3")
	sp.delay, sp.tick = 0, time.Millisecond
	sp.Start()
	waitFor(t, "a frame", func() bool { return strings.Contains(out.String(), "waiting for qwen3… 0s") })
	sp.Stop()
	got := out.String()
	if !strings.HasPrefix(got, "\r\x1b[K") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("spinner output %q does not draw and erase its line", got)
	}
	sp.Stop() // a second Stop is harmless
	if out.String() != got {
		t.Error("spinner drew after Stop")
	}
	// A reply quicker than the delay draws nothing.
	var quiet syncBuffer
	sp = NewSpinner(&quiet, "x")
	sp.Start()
	sp.Stop()
	if quiet.String() != "" {
		t.Errorf("quick reply drew %q", quiet.String())
	}
}

// writeTools offers the write tools and approves only proposals for
// paths in ok, as the gate would after a person's answer.
type writeTools struct {
	*fakeTools
	ok map[string]bool
}

func (d writeTools) Tools() []*toolspec.Tool { return d.cat.Tools(true) }

func (d writeTools) Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result {
	t, canon, err := d.cat.Validate(name, args)
	if err != nil {
		return toolspec.Errorf("%v", err)
	}
	if !t.Write {
		return d.fakeTools.Call(ctx, name, args)
	}
	var a struct{ Path string }
	json.Unmarshal(canon, &a)
	if d.ok[a.Path] {
		return toolspec.Result{Text: "wrote " + a.Path, Written: true}
	}
	// The text claims success: only the structured field counts.
	return toolspec.Result{Text: "wrote nothing, but this text says written", IsError: true}
}

func TestChangesCounted(t *testing.T) {
	js := `{"turns":[
		{"calls":[
			{"name":"propose_write","args":{"path":"a.txt","content":"x"}},
			{"name":"propose_edit","args":{"path":"b.txt","old_text":"x","new_text":"y"}},
			{"name":"read_file","args":{"path":"a.txt"}}
		]},
		{"text":"I fixed both files."},
		{"text":"Nothing to change."}
	]}`
	srv := script(t, js)
	tools := writeTools{newFakeTools(t, map[string]string{"a.txt": "x"}), map[string]bool{"a.txt": true}}
	s := New(Config{Backend: backend(t, native, srv.URL), Tools: tools, Model: "qwen3"})
	if _, err := s.Ask(context.Background(), "fix"); err != nil {
		t.Fatal(err)
	}
	if p, w := s.Changes(); p != 2 || w != 1 {
		t.Errorf("Changes() = %d, %d; want 2 proposed, 1 written", p, w)
	}
	if _, err := s.Ask(context.Background(), "again?"); err != nil {
		t.Fatal(err)
	}
	if p, w := s.Changes(); p != 0 || w != 0 {
		t.Errorf("Changes() after a question without proposals = %d, %d", p, w)
	}
}

func TestChangeSummary(t *testing.T) {
	for _, c := range []struct {
		p, w int
		want string
	}{{1, 0, "1 change proposed, 0 written"}, {2, 1, "2 changes proposed, 1 written"}, {1, 1, "1 change proposed, 1 written"}} {
		if got := ChangeSummary(c.p, c.w); got != c.want {
			t.Errorf("ChangeSummary(%d, %d) = %q, want %q", c.p, c.w, got, c.want)
		}
	}
}
