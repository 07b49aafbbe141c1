package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/runner"
)

// TestGrepAnswersAtItsDeadline: a grep too slow for the call's timeout
// answers before the host gives up on it, with the hits found so far and a
// note, and the instance serves the next call. The slow file is 1 TiB,
// sparse: text at its start (so it is searched, not skipped as binary),
// then a hole that takes far longer than the deadline to read on any
// machine, however fast its matcher.
func TestGrepAnswersAtItsDeadline(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("word 12345678901\n"), 0o644)
	big := filepath.Join(root, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("abcdefghij klmnopqrstuvwxyz 0123456789\n", 1<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<40); err != nil {
		t.Skipf("this file system cannot hold a 1 TiB sparse file: %v", err)
	}
	m, err := module()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.Open(m, runner.Config{Root: root, Resolver: confine.Auto, Timeout: 5 * time.Second, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	resp, err := r.Exec(context.Background(), proto.Request{ID: 1, Tool: proto.Grep, Args: []byte(`{"pattern":"\\w+ \\d{11}"}`)})
	if err != nil {
		t.Fatalf("the host gave up on the grep: %v", err)
	}
	want := "a.txt:1: word 12345678901\n[the time limit was reached before the whole tree was walked, so the results are incomplete; narrow the path or pattern]"
	if resp.Text != want {
		t.Errorf("got:\n%s\nwant:\n%s", resp.Text, want)
	}
	if resp := call(t, r, proto.Stat, map[string]any{"path": "a.txt"}); resp.IsError {
		t.Errorf("the next call: %s", resp.Text)
	}
}
