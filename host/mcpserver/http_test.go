package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/gate"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
)

const testToken = "0123456789abcdef0123456789abcdef"

// newEngine is an engine over ex, with the real approval gate on a
// temporary root when withGate is set; it returns the root too.
func newEngine(t testing.TB, ex engine.Executor, withGate bool) (*engine.Engine, string) {
	t.Helper()
	cat, err := toolspec.New()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	opt := engine.Options{Catalog: cat, Policy: pol, Exec: ex}
	if withGate {
		a, err := NewApprover(0, func(r gate.Reviewer) (engine.Proposer, error) {
			return gate.New(gate.Options{Root: root, Policy: pol, Reviewer: r})
		})
		if err != nil {
			t.Fatal(err)
		}
		opt.Proposer = a
	}
	eng, err := engine.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, root
}

// bearer adds a token (and any other headers) to every request.
type bearer struct {
	token string
	extra http.Header
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	for k, v := range b.extra {
		r.Header[k] = v
	}
	return b.next.RoundTrip(r)
}

// connect opens an SDK client session over Streamable HTTP.
func connect(t testing.TB, url, token string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
	c := mcp.NewClient(&mcp.Implementation{Name: "http-test"}, &mcp.ClientOptions{ElicitationHandler: elicit})
	return c.Connect(context.Background(), tr, nil)
}

// serveHTTP serves eng with the real ServeHTTP on a loopback port; the
// server stops at the test's end and must stop cleanly.
func serveHTTP(t *testing.T, eng Engine, opt Options, hopt HTTPOptions) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(eng, opt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTP(ctx, ln, hopt) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP after cancel: %v", err)
		}
	})
	return srv, URL(ln)
}

func TestHTTPToolsAndCalls(t *testing.T) {
	ex := &fakeExec{}
	eng, _ := newEngine(t, ex, false)
	_, url := serveHTTP(t, eng, Options{}, HTTPOptions{Token: testToken})
	cs, err := connect(t, url, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := strings.Join(toolNames(t, cs), " ")
	for _, want := range []string{"list_dir", "read_file", "grep", "glob", "stat", ReadFiles} {
		if !strings.Contains(names, want) {
			t.Errorf("tools over HTTP = %s; %s missing", names, want)
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); res.IsError || got != `guest ran read_file {"path":"a.txt"}` {
		t.Errorf("read_file over HTTP = %q (isError %v)", got, res.IsError)
	}
	// A refusal is the engine's text, as over stdio, and never reaches the guest.
	before := ex.count()
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.HasPrefix(text(res), "error: ") || ex.count() != before {
		t.Errorf("read_file ../x over HTTP = %q (isError %v), guest calls %d -> %d", text(res), res.IsError, before, ex.count())
	}
}

// post sends one raw POST to the handler and returns the status and body.
func post(t *testing.T, url string, hdr map[string]string, body io.Reader, length int64) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestHTTPRefusals(t *testing.T) {
	eng, _ := newEngine(t, &fakeExec{}, false)
	srv := New(eng, Options{})
	hs := httptest.NewServer(srv.Handler(HTTPOptions{Token: testToken, MaxBodyBytes: 4096}))
	defer hs.Close()
	auth := "Bearer " + testToken
	big := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"` + strings.Repeat("x", 5000) + `"}}}`
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		body   string
		chunk  bool // no Content-Length: the limit is found while reading
		status int
		want   string
	}{
		{"no token", nil, initialize, false, 401, "needs the header Authorization: Bearer TOKEN"},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, initialize, false, 401, "wrong bearer token"},
		{"token of another scheme", map[string]string{"Authorization": "Basic " + testToken}, initialize, false, 401, "Authorization: Bearer"},
		{"token as a prefix", map[string]string{"Authorization": auth[:len(auth)-1]}, initialize, false, 401, "wrong bearer token"},
		{"foreign origin", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, initialize, false, 403, "web origin"},
		{"foreign origin without a token", map[string]string{"Origin": "http://evil.example:8080"}, initialize, false, 403, "web origin"},
		{"null origin", map[string]string{"Authorization": auth, "Origin": "null"}, initialize, false, 403, "web origin"},
		{"rebound host", map[string]string{"Authorization": auth, "Host": "evil.example"}, initialize, false, 403, "invalid Host header"},
		{"oversized body", map[string]string{"Authorization": auth}, big, false, 413, "request too large: 5"},
		{"oversized chunked body", map[string]string{"Authorization": auth}, big, true, 413, "exceeds 4096 bytes"},
		{"loopback origin", map[string]string{"Authorization": auth, "Origin": "http://localhost:6274"}, initialize, false, 200, `"protocolVersion":"2025-06-18"`},
		{"no origin", map[string]string{"Authorization": auth}, initialize, false, 200, `"protocolVersion":"2025-06-18"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			length := int64(len(tc.body))
			if tc.chunk {
				body, length = io.MultiReader(strings.NewReader(tc.body)), -1 // not a *strings.Reader: no length known
			}
			status, got := post(t, hs.URL, tc.hdr, body, length)
			if status != tc.status || !strings.Contains(got, tc.want) {
				t.Errorf("status %d, body %q; want %d with %q", status, got, tc.status, tc.want)
			}
		})
	}
	// A preflight from a loopback page is answered with CORS headers and no
	// token; one from elsewhere is refused.
	for origin, want := range map[string]int{"http://127.0.0.1:3000": 204, "http://[::1]:3000": 204, "https://example.com": 403} {
		req, _ := http.NewRequest(http.MethodOptions, hs.URL, nil)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || (want == 204 && resp.Header.Get("Access-Control-Allow-Origin") != origin) {
			t.Errorf("preflight from %s: %d %v, want %d", origin, resp.StatusCode, resp.Header, want)
		}
	}
}

func TestLoopbackOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://localhost": true, "http://localhost:6274": true, "https://LOCALHOST:1": true,
		"http://127.0.0.1:8080": true, "http://127.1.2.3": true, "http://[::1]:80": true,
		"null": false, "file://": false, "http://localhost.evil.example": false, "http://127.0.0.1.nip.io": false,
		"http://evil.example": false, "http://user@localhost": false, "http://[::ffff:8.8.8.8]": false,
		"http://0.0.0.0:80": false, "chrome-extension://abc": false, "": false,
	} {
		if got := LoopbackOrigin(origin); got != want {
			t.Errorf("LoopbackOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestListenAddress(t *testing.T) {
	for in, want := range map[string]string{
		":0": "127.0.0.1:0", "0": "127.0.0.1:0", "8080": "127.0.0.1:8080", "localhost:1": "localhost:1",
		"0.0.0.0:80": "0.0.0.0:80", "[::1]:0": "[::1]:0", "[::]:9": "[::]:9",
	} {
		if got, err := ListenAddress(in); err != nil || got != want {
			t.Errorf("ListenAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "host:", "a:b:c", "99999", "::1"} {
		if got, err := ListenAddress(bad); err == nil {
			t.Errorf("ListenAddress(%q) = %q, want an error", bad, got)
		}
	}
}

func TestHTTPSessionsBounded(t *testing.T) {
	eng, _ := newEngine(t, &fakeExec{}, false)
	_, url := serveHTTP(t, eng, Options{}, HTTPOptions{Token: testToken, MaxSessions: 2})
	a, err := connect(t, url, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := connect(t, url, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// The SDK's client says only "Service Unavailable" (a status it takes
	// as transient); the body says why.
	if c, err := connect(t, url, testToken, nil); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a third session: %v, want refused as too many", err)
	}
	if status, body := post(t, url, map[string]string{"Authorization": "Bearer " + testToken}, strings.NewReader(initialize), int64(len(initialize))); status != 503 || !strings.Contains(body, "too many sessions: 2 are open") {
		t.Errorf("a third session, raw: %d %s", status, body)
	}
	// The sessions open still work, and a closed one frees its slot.
	if _, err := b.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	a.Close() // DELETE: the server ends the session at once
	c, err := connect(t, url, testToken, nil)
	if err != nil {
		t.Fatalf("a session after one closed: %v", err)
	}
	c.Close()
}

// blockingExec holds every call until release is closed, and counts the
// calls that reached it.
type blockingExec struct {
	fakeExec
	started chan struct{}
	release chan struct{}
}

func (b *blockingExec) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	b.started <- struct{}{}
	<-b.release
	return b.fakeExec.Exec(ctx, req)
}

func TestCallsBounded(t *testing.T) {
	ex := &blockingExec{started: make(chan struct{}, 10), release: make(chan struct{})}
	eng, _ := newEngine(t, ex, false)
	_, url := serveHTTP(t, eng, Options{MaxCalls: 1, MaxWaiting: 1}, HTTPOptions{Token: testToken})
	cs, err := connect(t, url, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(p string) chan *mcp.CallToolResult {
		ch := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "stat", Arguments: map[string]any{"path": p}})
			if err != nil {
				res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "protocol error: " + err.Error()}}, IsError: true}
			}
			ch <- res
		}()
		return ch
	}
	first := call("a")
	<-ex.started // running: the one slot is taken
	second := call("b")
	// The second waits; the third is refused at once, whichever of the two
	// the server saw first: wait until one of them is answered busy.
	third := call("c")
	var busy *mcp.CallToolResult
	select {
	case busy = <-second:
		second = third
	case busy = <-third:
	}
	if !busy.IsError || !strings.Contains(text(busy), "moat is busy: 1 calls are running and 1 more are waiting") {
		t.Errorf("the call beyond the bound = %q, want busy", text(busy))
	}
	close(ex.release)
	for _, ch := range []chan *mcp.CallToolResult{first, second} {
		if res := <-ch; res.IsError {
			t.Errorf("a call within the bound = %q", text(res))
		}
	}
	if n := ex.count(); n != 2 {
		t.Errorf("%d calls reached the guest, want 2", n)
	}
}

// Writes over HTTP ask the person through the client's elicitation dialog,
// exactly as over stdio: the request travels on the tools/call's stream.
func TestHTTPElicitation(t *testing.T) {
	eng, root := newEngine(t, &fakeExec{}, true)
	_, url := serveHTTP(t, eng, Options{}, HTTPOptions{Token: testToken})
	for _, tc := range []struct {
		approve bool
		file    string
		want    string
	}{{true, "yes.txt", "wrote yes.txt"}, {false, "no.txt", "declined"}} {
		var asked string
		cs, err := connect(t, url, testToken, func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = r.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": tc.approve}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if names := strings.Join(toolNames(t, cs), " "); !strings.Contains(names, "propose_write") {
			t.Errorf("an eliciting client over HTTP is not offered propose_write: %s", names)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "propose_write", Arguments: map[string]any{"path": tc.file, "content": "hello\n"}})
		if err != nil {
			t.Fatal(err)
		}
		cs.Close()
		_, written := readFile(t, filepath.Join(root, tc.file))
		if !strings.Contains(asked, tc.file) || !strings.Contains(text(res), tc.want) || written != tc.approve {
			t.Errorf("approve %v: asked %q; result %q; written %v", tc.approve, asked, text(res), written)
		}
	}
	// A client without elicitation over HTTP is read-only.
	cs, err := connect(t, url, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if names := strings.Join(toolNames(t, cs), " "); strings.Contains(names, "propose_") {
		t.Errorf("a client without elicitation over HTTP is offered %s", names)
	}
}

// 1,000 calls at once from several clients over HTTP all get their own
// answer, and once the clients close and the server stops, no goroutine is
// left behind.
func TestHTTPConcurrentCallsNoLeak(t *testing.T) {
	const clients, perClient = 5, 200
	before := runtime.NumGoroutine()
	func() {
		ex := &fakeExec{}
		eng, _ := newEngine(t, ex, false)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := New(eng, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.ServeHTTP(ctx, ln, HTTPOptions{Token: testToken}) }()

		var wg sync.WaitGroup
		errs := make(chan error, clients*perClient)
		var sessions []*mcp.ClientSession
		var transports []*http.Transport
		for c := range clients {
			tr := &http.Transport{MaxIdleConnsPerHost: perClient}
			transports = append(transports, tr)
			hc := &http.Client{Transport: bearer{token: testToken, next: tr}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("client-", c)}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: URL(ln), HTTPClient: hc, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			sessions = append(sessions, cs)
			for i := range perClient {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := fmt.Sprintf("c%d/f%d.txt", c, i)
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": p}})
					switch {
					case err != nil:
						errs <- fmt.Errorf("%s: %v", p, err)
					case res.IsError || text(res) != `guest ran read_file {"path":"`+p+`"}`:
						errs <- fmt.Errorf("%s: answered %q", p, text(res))
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		n := 0
		for err := range errs {
			if n++; n <= 5 {
				t.Error(err)
			}
		}
		if n > 0 {
			t.Errorf("%d of %d calls failed", n, clients*perClient)
		}
		if got := ex.count(); got != clients*perClient {
			t.Errorf("%d calls reached the guest, want %d", got, clients*perClient)
		}
		for _, cs := range sessions {
			cs.Close()
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
		for _, tr := range transports {
			tr.CloseIdleConnections()
		}
		eng.Close()
	}()
	// Goroutines end asynchronously (connection readers, timers): wait for
	// them to go, without a deadline on how fast, only on whether.
	var after int
	for range 200 {
		if after = runtime.NumGoroutine(); after <= before+2 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines before, %d after the server stopped:\n%s", before, after, buf[:runtime.Stack(buf, true)])
}

func TestUnknownToolNamesNearest(t *testing.T) {
	for _, tc := range []struct {
		gate bool
		name string
		want string
	}{
		{false, "read_text_file", `unknown tool "read_text_file": did you mean "read_file"?; moat's tools are list_dir, read_file, read_files, grep, glob, stat`},
		{false, "list_directory", `did you mean "list_dir"?`},
		{false, "read_multiple_files", `did you mean "read_files"?`},
		{false, "get_file_info", `did you mean "stat"?`},
		{false, "search_files", `did you mean "glob"?`},
		{false, "list_directory_with_sizes", `did you mean "list_dir" with "sizes": true?`},
		{false, "directory_tree", `did you mean "list_dir" with "depth": 2 to 8 (the folders inside too, one path a line)?`},
		{false, "raed_file", `did you mean "read_file"?`},
		{false, "move_file", `moat never creates, moves, copies or deletes files`},
		{false, "list_allowed_directories", `this server serves one folder, its root`},
		{false, "write_file", `moat's propose_write does that, but it is not offered here`},
		{false, "propose_edit", `writes are not offered by this server`},
		{false, "frobnicate", `unknown tool "frobnicate"; moat's tools are list_dir`},
		{true, "write_file", `did you mean "propose_write"?; moat's tools are list_dir, read_file, read_files, grep, glob, stat, propose_write, propose_edit`},
	} {
		var elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
		if tc.gate {
			elicit = accept(true)
		}
		f := start(t, tc.gate, 0, elicit)
		_, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.name, Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.want)
		}
	}
}

func TestReadFiles(t *testing.T) {
	f := start(t, false, 0, nil)
	res := f.call(t, ReadFiles, map[string]any{"paths": []string{"a.txt", "../out", ".env", "b.txt"}})
	got := text(res)
	for _, want := range []string{
		"==> \"a.txt\" (1 of 4) <==\nguest ran read_file {\"path\":\"a.txt\"}\n",
		"==> \"../out\" (2 of 4) <==\nerror: ",
		"==> \".env\" (3 of 4) <==\nerror: ",
		"==> \"b.txt\" (4 of 4) <==\nguest ran read_file {\"path\":\"b.txt\"}\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("read_files answer lacks %q:\n%s", want, got)
		}
	}
	if res.IsError {
		t.Errorf("read_files with two readable files is an error")
	}
	if n := f.exec.count(); n != 2 {
		t.Errorf("%d reads reached the guest, want the 2 allowed", n)
	}
	// structuredContent is the same answer, file by file.
	b, _ := json.Marshal(res.StructuredContent)
	var out ReadFilesOutput
	if err := json.Unmarshal(b, &out); err != nil || len(out.Files) != 4 || out.Files[1].Path != "../out" || !out.Files[1].IsError || out.Files[0].IsError || !strings.HasPrefix(out.Files[2].Text, "error: ") {
		t.Errorf("structuredContent = %s", b)
	}
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "read_files needs paths"},
		{map[string]any{"paths": []string{}}, "read_files needs paths"},
		{map[string]any{"paths": make([]string, MaxReadFilesPaths+1)}, "at most 16 paths, got 17"},
		{map[string]any{"paths": "a.txt"}, "must be a JSON object"},
		{map[string]any{"paths": []string{"a"}, "path": "b"}, `unknown field "path"`},
	} {
		res := f.call(t, ReadFiles, tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("read_files %v = %q, want an error with %q", tc.args, text(res), tc.want)
		}
	}
	// Every file refused: the call is an error.
	if res := f.call(t, ReadFiles, map[string]any{"paths": []string{"/etc/passwd"}}); !res.IsError {
		t.Errorf("read_files of nothing readable = %q, not an error", text(res))
	}
}

// bigExec answers every read with n bytes.
type bigExec struct {
	fakeExec
	n int
}

func (b *bigExec) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	b.fakeExec.Exec(ctx, req)
	return proto.Response{ID: req.ID, Text: string(bytes.Repeat([]byte("x"), b.n))}, nil
}

func TestReadFilesBudget(t *testing.T) {
	ex := &bigExec{n: 400 << 10}
	eng, _ := newEngine(t, ex, false)
	ctx := context.Background()
	cs := connectInMemory(t, eng)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ReadFiles, Arguments: map[string]any{"paths": []string{"1", "2", "3", "4"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := text(res)
	if len(got) > MaxReadFilesBytes+4096 || strings.Count(got, strings.Repeat("x", 400<<10)) != 2 || !strings.Contains(got, "==> \"3\" (3 of 4) <==\nerror: not read: 3's page (409600 bytes) does not fit") ||
		!strings.Contains(got, "==> \"4\" (4 of 4) <==\nerror: not read: 4's page") {
		t.Errorf("read_files over budget: %d bytes, %.300s...", len(got), got[len(got)-600:])
	}
	if ex.count() != 4 {
		t.Errorf("%d reads, want 4 (a file after one that did not fit may be small enough)", ex.count())
	}
}
