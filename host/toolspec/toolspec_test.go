package toolspec

import (
	"encoding/json"
	"testing"
)

func TestValidateMessages(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ tool, args, want string }{
		{"read_file", `{"path":3}`, `path must be a string, got an integer (3)`},
		{"read_file", `{}`, `read_file needs "path" (a string)`},
		{"read_file", `{"path":"a","bogus":1}`, `read_file does not take "bogus" (it takes: limit, offset, path)`},
		{"read_file", `{"path":"a","offset":0}`, `offset must be at least 1, got 0`},
		{"read_file", `{"path":"a","limit":-1}`, `limit must be at least 0, got -1`},
		{"read_file", `{"path":"a","limit":1.5}`, `limit must be an integer, got a number (1.5)`},
		{"read_file", `[1]`, `read_file arguments must be a JSON object, got an array ([1])`},
		{"read_file", `{"path":`, `read_file arguments are not valid JSON: unexpected EOF`},
		{"read_file", `{"path":"a","offset":1e400}`, `read_file arguments hold a number out of range (number 1e400); no argument takes one that large`},
		{"read_file", `{"path":"../x"}`, `path escapes the sandbox: ../x`},
		{"read_file", `{"path":"/etc/passwd"}`, `absolute paths are not allowed: /etc/passwd (use a path relative to the workspace root)`},
		{"grep", `{"pattern":"x","ignore_case":"yes"}`, `ignore_case must be a boolean, got a string ("yes")`},
		{"nope", `{}`, `unknown tool: "nope" (available: list_dir, read_file, grep, glob, stat, propose_write, propose_edit)`},
	}
	for _, tc := range cases {
		_, _, err := c.Validate(tc.tool, json.RawMessage(tc.args))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Validate(%s, %s) = %v\n want %s", tc.tool, tc.args, err, tc.want)
		}
	}
	if _, canon, err := c.Validate("list_dir", nil); err == nil {
		t.Errorf("list_dir without path accepted: %s", canon)
	}
	if _, canon, err := c.Validate("grep", json.RawMessage(`{"pattern":"a","path":"src/../b"}`)); err != nil || string(canon) != `{"path":"src/../b","pattern":"a"}` {
		t.Errorf("valid grep refused or changed: %s %v", canon, err)
	}
}

// BenchmarkValidate: a valid call's arguments, as every call's are
// checked before the guest runs it.
func BenchmarkValidate(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"pattern":"func main","path":"src","glob":"*.go","ignore_case":true,"max_results":50}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Validate("grep", args); err != nil {
			b.Fatal(err)
		}
	}
}
