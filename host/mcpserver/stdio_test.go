package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
)

// slowExec holds every call until released, so a test can send a bad line
// while a reply is still owed.
type slowExec struct {
	entered chan struct{}
	release chan struct{}
}

func (s *slowExec) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	s.entered <- struct{}{}
	<-s.release
	return proto.Response{ID: req.ID, Text: "done " + req.Tool}, nil
}

func (s *slowExec) Close() error { return nil }

// rawSession serves a Server over StdioTransport on pipes and talks to it
// line by line, as a client in any language would.
type rawSession struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Reader
	done chan error
	exec *slowExec
}

func startRaw(t *testing.T, limit int, version ...string) *rawSession {
	t.Helper()
	cat, _ := toolspec.New()
	pol, _ := policy.New(nil, nil)
	ex := &slowExec{entered: make(chan struct{}, 8), release: make(chan struct{}, 8)}
	eng, err := engine.New(engine.Options{Catalog: cat, Policy: pol, Exec: ex})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawSession{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1), exec: ex}
	go func() {
		s.done <- New(eng, Options{}).Serve(context.Background(), &StdioTransport{Reader: inR, Writer: outW, MaxMessageBytes: limit})
		outW.Close()
	}()
	v := "2025-06-18"
	if len(version) > 0 {
		v = version[0]
	}
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if got := s.recv(); !strings.Contains(got, `"id":1,"result":{`) {
		t.Fatalf("initialize: %s", got)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

func (s *rawSession) recv() string {
	s.t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := s.out.ReadString('\n')
		ch <- l
	}()
	select {
	case l := <-ch:
		if l == "" {
			s.t.Fatal("the server closed its output")
		}
		return strings.TrimSuffix(l, "\n")
	case <-time.After(10 * time.Second):
		s.t.Fatal("no reply")
	}
	return ""
}

// close ends the session with EOF; Serve must return nil.
func (s *rawSession) close() {
	s.t.Helper()
	s.in.Close()
	io.Copy(io.Discard, s.out)
	if err := <-s.done; err != nil {
		s.t.Errorf("Serve: %v", err)
	}
}

func call(id int, path string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "read_file", "arguments": map[string]any{"path": path}}})
	return string(b)
}

// A malformed line is answered with -32700 and the session goes on, with
// the reply to a call in flight still delivered.
func TestStdioMalformedLineAnswered(t *testing.T) {
	s := startRaw(t, 0)
	s.send(call(2, "a.txt"))
	<-s.exec.entered // the call is in flight
	// Cut short after its id: the id is read before the fault.
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"`)
	if got := s.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"error":{"code":-32700,"message":"parse error: unexpected end of JSON input"}}`) {
		t.Errorf("malformed line: %s", got)
	}
	s.exec.release <- struct{}{}
	if got := s.recv(); !strings.Contains(got, `"id":2,"result":{"content":[{"type":"text","text":"done read_file"}]`) {
		t.Errorf("reply in flight: %s", got)
	}
	s.send(`not json at all`)
	if got := s.recv(); !strings.Contains(got, `"id":null,"error":{"code":-32700,"message":"parse error: invalid character 'o' in literal null (expecting 'u')"}`) {
		t.Errorf("garbage: %s", got)
	}
	s.send(`{"a":1} {"b":2}`)
	if got := s.recv(); !strings.Contains(got, `"id":null,"error":{"code":-32700`) {
		t.Errorf("two values on a line: %s", got)
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if got := s.recv(); !strings.Contains(got, `"id":4,"result":{`) {
		t.Errorf("after the bad lines: %s", got)
	}
	s.close()
}

// A number JSON allows but no Go number holds (1e400) is valid JSON, not a
// parse error: the reply carries the request's id, so the client is not
// left waiting, and the session goes on.
func TestStdioHugeNumberKeepsID(t *testing.T) {
	s := startRaw(t, 0)
	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"_meta":{"n":1e400}}}`, `{"jsonrpc":"2.0","id":12,"error":{"code":-32602,`},
		{`{"jsonrpc":"2.0","id":"s","method":"ping","params":{"_meta":{"n":-1e400}}}`, `{"jsonrpc":"2.0","id":"s","error":{"code":-32602,`},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt","offset":1e400}}}`, `{"jsonrpc":"2.0","id":13,"result":{"content":[{"type":"text","text":"error: read_file arguments `},
		{`{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"cursor":1e400`, `{"jsonrpc":"2.0","id":14,"error":{"code":-32700,`},
		{`{"jsonrpc":"2.0","method":"tools/list","params":{"n":1e400},"id":15,`, `{"jsonrpc":"2.0","id":15,"error":{"code":-32700,`},
		{`{"jsonrpc":"2.0","params":{"n":1e400,`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`},
	} {
		s.send(tc.line)
		if got := s.recv(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":16,"method":"ping"}`)
	if got := s.recv(); got != `{"jsonrpc":"2.0","id":16,"result":{}}` {
		t.Errorf("ping after: %s", got)
	}
	s.close()
}

// JSON that is not a JSON-RPC message is answered with -32600, with its id
// when it has one.
func TestStdioInvalidRequestAnswered(t *testing.T) {
	s := startRaw(t, 0)
	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"1.0","id":5,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: invalid message version tag \"1.0\"; expected \"2.0\""}}`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{`42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`},
		{`[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: JSON-RPC batches are not part of MCP since protocol version 2025-06-18`},
	} {
		s.send(tc.line)
		if got := s.recv(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if got := s.recv(); got != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("ping after: %s", got)
	}
	s.close()
}

// A message over the limit is skipped and answered with its id; the next
// one is served. Blank lines are ignored.
func TestStdioOversizedMessageAnswered(t *testing.T) {
	s := startRaw(t, 4096)
	big := call(8, strings.Repeat("x", 100_000))
	s.send(big)
	want := fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"message too large: %d bytes, more than the 4096 this server reads; nothing was done"}}`, len(big))
	if got := s.recv(); got != want {
		t.Errorf("oversized:\n got %s\nwant %s", got, want)
	}
	// Without an id in its first 64 KiB: id null.
	s.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"pad":"` + strings.Repeat("y", 100_000) + `"},"id":9}`)
	if got := s.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too large: `) {
		t.Errorf("oversized, id late: %s", got)
	}
	s.send("")
	s.send("   \r")
	s.send(call(10, "a.txt"))
	<-s.exec.entered
	s.exec.release <- struct{}{}
	if got := s.recv(); !strings.Contains(got, `"id":10,"result":`) {
		t.Errorf("after the oversized message: %s", got)
	}
	// Exactly at the limit is accepted.
	line := call(11, "")
	line = call(11, strings.Repeat("z", 4096-len(line)))
	if len(line) != 4096 {
		t.Fatalf("line is %d bytes", len(line))
	}
	s.send(line)
	<-s.exec.entered
	s.exec.release <- struct{}{}
	if got := s.recv(); !strings.Contains(got, `"id":11,"result":`) {
		t.Errorf("message at the limit: %s", got)
	}
	s.close()
}

func TestIDOfPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":3,"params":{"a":"xxx`, `3`},
		{`{"id":"abc","method":"x`, `"abc"`},
		{`{"params":{"a":[1,2,{"id":5}]},"id":4}`, `4`},
		{`{"params":{"a":"xx`, ``},
		{`{"id":null`, ``},
		{`{"id":{"a":1}}`, ``},
		{`[{"id":1}]`, ``},
	} {
		if got := string(idOfPrefix([]byte(tc.in))); got != tc.want {
			t.Errorf("idOfPrefix(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// In a protocol version that has batches, a batch goes to the SDK, which
// answers it with a batch.
func TestStdioBatchInOldProtocol(t *testing.T) {
	s := startRaw(t, 0, "2025-03-26")
	s.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	if got := s.recv(); !strings.HasPrefix(got, `[{"jsonrpc":"2.0","id":`) || !strings.Contains(got, `"id":3,"result":{}`) {
		t.Errorf("batch: %s", got)
	}
	s.send(`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":{}}]`)
	if got := s.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request in batch: `) {
		t.Errorf("bad batch: %s", got)
	}
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if got := s.recv(); got != `{"jsonrpc":"2.0","id":5,"result":{}}` {
		t.Errorf("after: %s", got)
	}
	s.close()
}

// End of input with calls still in flight: every reply is written before
// the session ends, as a script piping requests in and closing its end
// expects.
func TestStdioEndOfInputWaitsForReplies(t *testing.T) {
	s := startRaw(t, 0)
	s.send(call(2, "a.txt"))
	s.send(call(3, "b.txt"))
	<-s.exec.entered
	s.in.Close() // the client is done sending
	got := make(chan []string, 1)
	go func() {
		var lines []string
		for {
			l, err := s.out.ReadString('\n')
			if err != nil {
				got <- lines
				return
			}
			lines = append(lines, l)
		}
	}()
	time.Sleep(100 * time.Millisecond) // the end of input has reached the filter
	s.exec.release <- struct{}{}
	<-s.exec.entered
	s.exec.release <- struct{}{}
	select {
	case lines := <-got:
		all := strings.Join(lines, "")
		for _, id := range []string{`"id":2,"result"`, `"id":3,"result"`} {
			if !strings.Contains(all, id) {
				t.Errorf("no reply %s before the session ended:\n%s", id, all)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after its replies")
	}
	if err := <-s.done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
