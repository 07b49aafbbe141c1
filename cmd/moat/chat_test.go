package main

import "testing"

// A slash and a word is a command; a path at the start of a line is part
// of a question.
func TestChatSlashCommand(t *testing.T) {
	cases := []struct {
		line, name, rest string
		ok               bool
	}{
		{"/help", "/help", "", true},
		{"/clear now", "/clear", "now", true},
		{"/Bogus", "/Bogus", "", true},
		{"/etc/hosts: what is it?", "", "", false},
		{"/tmp is full?", "/tmp", "is full?", true}, // ambiguous: taken as a command, and refused with a hint
		{"/", "", "", false},
		{"/?", "", "", false},
		{"what is /help?", "", "", false},
	}
	for _, c := range cases {
		name, rest, ok := slashCommand(c.line)
		if name != c.name || rest != c.rest || ok != c.ok {
			t.Errorf("slashCommand(%q) = %q, %q, %v; want %q, %q, %v", c.line, name, rest, ok, c.name, c.rest, c.ok)
		}
	}
}

func TestChatFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"List the entries of a folder in the workspace, sorted; folders end with \"/\".": "List the entries of a folder in the workspace, sorted.",
		"Read a text file. Large files come in pages.":                                   "Read a text file.",
		"Find files matching a glob pattern (** matches any depth).":                     "Find files matching a glob pattern (** matches any depth).",
		"Describe a file: kind, size, mode (v1.2 format).":                               "Describe a file: kind, size, mode (v1.2 format).",
		"No full stop": "No full stop",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}
