package runner_test

import (
	"context"
	"errors"
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
// stops at its own deadline, with the hits found so far and a note, and the
// instance serves the next call. The slow file is 1 TiB, sparse: text at
// its start (so it is searched, not skipped as binary), then a hole that
// takes far longer than the deadline to read on any machine, however fast
// its matcher.
//
// The host's side is held (HoldHostDeadline): the guest gets the same
// time limit as always, but the host does not give up, so the answer can
// only come from the guest's own deadline, and a loaded machine that
// delays the guest cannot make the test race the host's clock. That the
// guest's deadline comes first is TestGuestDeadlineBeforeHosts'.
func TestGrepAnswersAtItsDeadline(t *testing.T) {
	r := slowTreeRunner(t, time.Second)
	var deadlines []time.Time
	runner.HoldHostDeadline(r, func(dl time.Time) { deadlines = append(deadlines, dl) })
	resp, err := r.Exec(context.Background(), proto.Request{ID: 1, Tool: proto.Grep, Args: []byte(`{"pattern":"\\w+ \\d{11}"}`)})
	if err != nil {
		t.Fatalf("the grep failed: %v", err)
	}
	if len(deadlines) != 1 {
		t.Fatalf("the call was given %d deadlines, want 1", len(deadlines))
	}
	want := "a.txt:1: word 12345678901\n[the time limit was reached before the whole tree was walked, so the results are incomplete; narrow the path or pattern]"
	if resp.Text != want {
		t.Errorf("got:\n%s\nwant:\n%s", resp.Text, want)
	}
	if resp := call(t, r, proto.Stat, map[string]any{"path": "a.txt"}); resp.IsError {
		t.Errorf("the next call: %s", resp.Text)
	}
}

// TestGuestDeadlineBeforeHosts: the time limit the guest is sent never
// reaches past the host's deadline, counted from before it was computed;
// the guest counts it from later still (when it reads the request) and
// stops a margin before its end. A deadline already passed still sends a
// limit (0 would mean none), and a call without a deadline sends none.
func TestGuestDeadlineBeforeHosts(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, time.Second, time.Millisecond, -time.Second} {
		dl := time.Now().Add(d)
		ctx, cancel := context.WithDeadline(context.Background(), dl)
		before := time.Now()
		limit := runner.TimeLimit(ctx)
		cancel()
		if limit <= 0 {
			t.Errorf("deadline in %v: time limit %d, want a positive one", d, limit)
		}
		if d > 0 && before.Add(time.Duration(limit)).After(dl) {
			t.Errorf("deadline in %v: the guest's limit %v, counted from before it was set, ends after the host's deadline", d, time.Duration(limit))
		}
	}
	if limit := runner.TimeLimit(context.Background()); limit != 0 {
		t.Errorf("no deadline: time limit %d, want 0 (none)", limit)
	}
}

// TestCancelledCallEnds: a call whose context is cancelled while its guest
// is still reading ends with the context's error, not the guest's answer
// (the instance is killed, which closes both its pipes), and the next
// call gets a fresh instance. The guest reads a 1 TiB sparse file, which
// no machine finishes within the test's time.
func TestCancelledCallEnds(t *testing.T) {
	r := slowTreeRunner(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	resp, err := r.Exec(ctx, proto.Request{ID: 1, Tool: proto.Grep, Args: []byte(`{"pattern":"zzqqxx"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled grep: err %v, answer %q; want context.Canceled", err, resp.Text)
	}
	if resp := call(t, r, proto.Stat, map[string]any{"path": "big.txt"}); resp.IsError || !strings.Contains(resp.Text, "kind: file") {
		t.Errorf("the next call: %s", resp.Text)
	}
}

// slowTreeRunner is a runner of one instance with the given timeout over
// a root holding a.txt (one hit of \w+ \d{11}) and big.txt, 1 TiB, sparse:
// text at its start (past what is sniffed, so it is searched, not skipped
// as binary), then a hole that takes far longer than any test to read.
func slowTreeRunner(t *testing.T, timeout time.Duration) *runner.Runner {
	t.Helper()
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
	r, err := runner.Open(m, runner.Config{Root: root, Resolver: confine.Auto, Timeout: timeout, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
