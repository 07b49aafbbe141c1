package agent

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ in, lines, oneLine string }{
		{"plain text", "plain text", "plain text"},
		{"a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"\x1b[2Kgone", `\x1b[2Kgone`, `\x1b[2Kgone`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`, `\x1b]0;title\x07`},
		{"\x1b]8;;http://evil\x1b\\link", `\x1b]8;;http://evil\x1b\link`, `\x1b]8;;http://evil\x1b\link`},
		{"ok\rfake", `ok\rfake`, `ok\rfake`},
		{"\u202etxt.exe", `\u202etxt.exe`, `\u202etxt.exe`},
		{"\u2066x\u2069", `\u2066x\u2069`, `\u2066x\u2069`},
		{"c1 \u009b2J", `c1 \u009b2J`, `c1 \u009b2J`},
		{"bad \xff\xfe", `bad \xff\xfe`, `bad \xff\xfe`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"héllo, 世界 🙂", "héllo, 世界 🙂", "héllo, 世界 🙂"},
	}
	for _, c := range cases {
		if got := Sanitize(c.in, true); got != c.lines {
			t.Errorf("Sanitize(%q, true) = %q, want %q", c.in, got, c.lines)
		}
		if got := Sanitize(c.in, false); got != c.oneLine {
			t.Errorf("Sanitize(%q, false) = %q, want %q", c.in, got, c.oneLine)
		}
	}
}

// Splitting text at every byte must give the same output as writing it
// whole: no character is mangled by a chunk boundary.
func TestStreamSanitizerSplits(t *testing.T) {
	text := "é€🙂\x1b[31m\u202e end\xff"
	var whole bytes.Buffer
	s := streamSanitizer{w: &whole}
	s.Write(text)
	s.Flush()
	var split bytes.Buffer
	s = streamSanitizer{w: &split}
	for i := 0; i < len(text); i++ {
		s.Write(text[i : i+1])
	}
	s.Flush()
	if whole.String() != split.String() {
		t.Errorf("split %q != whole %q", split.String(), whole.String())
	}
	if want := Sanitize(text, true) + "\n"; whole.String() != want {
		t.Errorf("got %q, want %q", whole.String(), want)
	}
}

func TestTruncateResult(t *testing.T) {
	text := strings.Repeat("line é\n", 500) // 4000 bytes
	out, cut := truncateResult(text, 1000, 0)
	if !cut || len(out) > 1000 || !utf8.ValidString(out) {
		t.Fatalf("cut=%v len=%d valid=%v", cut, len(out), utf8.ValidString(out))
	}
	if !strings.HasSuffix(out, "line é\n[truncated: result was 4.0 KB; ask for less (offset/limit, a narrower pattern)]") {
		t.Errorf("not cut at a line end: %q", out[len(out)-120:])
	}
	if out, cut := truncateResult("short", 1000, 0); cut || out != "short" {
		t.Errorf("short result changed: %q", out)
	}
}

// A cut read_file result says where to read on, as read_file's own paging
// note does: the line after the last one shown in full.
func TestTruncateReadFileNamesTheOffset(t *testing.T) {
	text := strings.Repeat("line é\n", 500) // lines 40-539 of a file, 8 bytes each
	out, cut := truncateResult(text, 1000, 40)
	if !cut || len(out) > 1000 {
		t.Fatalf("cut=%v len=%d", cut, len(out))
	}
	body, note, _ := strings.Cut(out, "\n[truncated")
	shown := strings.Count(body, "\n") + 1
	want := fmt.Sprintf("[truncated: result was 4.0 KB; showed lines 40-%d; call read_file with offset=%d (and a smaller limit) to read on]", 39+shown, 40+shown)
	if "[truncated"+note != want {
		t.Errorf("got %q, want %q", "[truncated"+note, want)
	}
	if !strings.HasSuffix(body, "line é") {
		t.Errorf("not cut at a line end: %q", body[len(body)-20:])
	}
	// One line longer than the budget: nothing is shown in full.
	out, _ = truncateResult(strings.Repeat("x", 5000), 1000, 7)
	if !strings.Contains(out, "its first line longer than the context window allows; call read_file with offset=7") {
		t.Errorf("a cut first line: %q", out[len(out)-200:])
	}
	if resultStart(ToolCall{Name: "read_file", Arguments: `{"path":"a","offset":12}`}) != 12 ||
		resultStart(ToolCall{Name: "read_file", Arguments: `{"path":"a"}`}) != 1 ||
		resultStart(ToolCall{Name: "grep", Arguments: `{"pattern":"a"}`}) != 0 {
		t.Error("resultStart")
	}
}

func TestFit(t *testing.T) {
	big := strings.Repeat("x", 4000) // ~1000 tokens
	history := []Message{
		{Role: "system", Content: SystemPrompt},
		{Role: "user", Content: "first question"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: "tool", Content: big, ToolCallID: "1"},
		{Role: "assistant", Content: "an old answer " + big},
		{Role: "user", Content: "latest question"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "2", Name: "read_file", Arguments: `{"path":"b"}`}}},
		{Role: "tool", Content: big, ToolCallID: "2"},
	}
	// Everything fits a large window untouched.
	got, err := fit(history, nil, 32768)
	if err != nil || got[3].Content != big {
		t.Fatalf("large window: %v", err)
	}
	// A window for about one big result: the oldest result goes first.
	got, err = fit(history, nil, 3200)
	if err != nil {
		t.Fatal(err)
	}
	if got[3].Content != droppedResult || got[7].Content != big || got[4].Content == droppedMessage {
		t.Errorf("want only the oldest result dropped: %q / %q / %q", got[3].Content[:20], got[7].Content[:20], got[4].Content[:20])
	}
	if history[3].Content != big {
		t.Error("fit changed the history itself")
	}
	// Smaller: the old turn goes too, never the system prompt or the
	// latest question.
	got, err = fit(history, nil, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Content != SystemPrompt || got[5].Content != "latest question" {
		t.Error("system prompt or latest question touched")
	}
	if got[4].Content != droppedMessage || got[7].Content != droppedResult {
		t.Errorf("old turn %q, current result %q", got[4].Content, got[7].Content[:20])
	}
	// Too small even for the essentials: refuse rather than let the
	// server cut the system prompt.
	if _, err := fit(history, nil, 256); !errors.Is(err, ErrContextFull) {
		t.Errorf("tiny window: err = %v", err)
	}
}

func TestParseHost(t *testing.T) {
	cases := map[string]string{
		"":                          "http://127.0.0.1:11434",
		"127.0.0.1:11434":           "http://127.0.0.1:11434",
		"localhost":                 "http://localhost:11434",
		":8080":                     "http://127.0.0.1:8080",
		"0.0.0.0":                   "http://0.0.0.0:11434",
		"http://gpu-box":            "http://gpu-box:80",
		"https://ollama.example/":   "https://ollama.example:443",
		"http://10.0.0.2:1234/v1":   "http://10.0.0.2:1234/v1",
		"[::1]:11434":               "http://[::1]:11434",
		"  http://127.0.0.1:9999  ": "http://127.0.0.1:9999",
	}
	for in, want := range cases {
		u, err := ParseHost(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseHost(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "unix:///tmp/s", "a b:1"} {
		if _, err := ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) accepted", bad)
		}
	}
}

func TestActivitySummary(t *testing.T) {
	cases := []struct{ tool, args, want string }{
		{"grep", `{"pattern":"TODO","path":"src"}`, `"TODO" in src`},
		{"grep", `{"pattern":"TODO","path":"."}`, `"TODO"`},
		{"grep", `{"pattern":"\\bfoo"}`, `"\bfoo"`},
		{"read_file", `{"path":"a\u001b[2Kb"}`, `a\x1b[2Kb`},
		{"read_file", `{"path":"notes.txt","offset":3}`, `notes.txt`},
		{"propose_write", `{"path":"x.txt","content":"pwned"}`, `x.txt`},
		{"read_file", `{}`, ``},
		{"read_file", ``, ``},
		{"read_file", `"just a string"`, `"just a string"`},
		{"read_file", `{"x":1}`, `{"x":1}`},
		{"run_shell", `{"path":"p"}`, `{"path":"p"}`}, // no such tool: its arguments, raw
	}
	for _, tc := range cases {
		if got := summary(tc.tool, tc.args); got != tc.want {
			t.Errorf("summary(%s, %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
}
