package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// At a terminal, a chat that was saved ends by saying how to go on with
// it; one in which nothing was asked saves nothing and says nothing.
func TestChatKeysSessionNote(t *testing.T) {
	p := startPtyChat(t, `{"turns":[{"text":"One."}]}`)
	p.waitPrompts(1)
	p.typeKeys("First\r")
	p.waitPrompts(2)
	p.typeKeys("\x04")
	if c := p.exit(); c != exitOK {
		t.Fatalf("exit status %d, want 0", c)
	}
	m := regexp.MustCompile(`moat: session (\S+) saved; go on with it: moat chat --resume (\S+) \(or --continue in this root\)\n$`).FindStringSubmatch(p.stderr.String())
	if m == nil || m[1] != m[2] {
		t.Fatalf("no note on how to resume at the end: %q", p.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("XDG_STATE_HOME"), "moat", "sessions", m[1]+".jsonl")); err != nil {
		t.Errorf("the session named is not saved: %v", err)
	}

	p = startPtyChat(t, `{"turns":[]}`)
	p.waitPrompts(1)
	p.typeKeys("\x04")
	if c := p.exit(); c != exitOK {
		t.Fatalf("exit status %d, want 0", c)
	}
	if s := p.stderr.String(); regexp.MustCompile(`session`).MatchString(s) {
		t.Errorf("a chat with no question spoke of a session: %q", s)
	}
	if des, _ := os.ReadDir(filepath.Join(os.Getenv("XDG_STATE_HOME"), "moat", "sessions")); len(des) != 0 {
		t.Errorf("a chat with no question saved %d files", len(des))
	}
}
