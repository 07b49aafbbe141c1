package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMCP drives `moat mcp` as MCP clients do: a real subprocess over its
// stdin and stdout, through the official SDK's client (mcp) or as bare
// newline-delimited JSON-RPC (mcpraw).
func TestMCP(t *testing.T) {
	testscript.Run(t, scriptParams(t, "mcp", map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"mcp":      cmdMCP,
		"mcpraw":   cmdMCPRaw,
		"tsclient": cmdTSClient,
	}))
}

// moatCmd builds `moat mcp FLAGS` as a subprocess of the script: the test
// binary (testscript.Main put it on PATH as moat), in $WORK, with the
// script's environment.
func moatCmd(ts *testscript.TestScript, stderr io.Writer, flags []string) *exec.Cmd {
	bin, err := exec.LookPath("moat")
	ts.Check(err)
	cmd := exec.Command(bin, append([]string{"mcp"}, flags...)...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = os.Environ()
	for _, k := range []string{"WORK", "HOME", "TMPDIR", "PATH", "MOAT_CACHE_DIR", "MOAT_ISOLATE", "OLLAMA_HOST"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	cmd.Stderr = stderr
	return cmd
}

// lockedWriter serialises writes to the script's stderr from the server's
// stderr copier and the client's elicitation handler.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// watchWriter closes seen once the text written through it contains want.
type watchWriter struct {
	w    io.Writer
	want string
	buf  []byte
	seen chan struct{}
	done bool
}

func (ww *watchWriter) Write(p []byte) (int, error) {
	if !ww.done {
		if ww.buf = append(ww.buf, p...); strings.Contains(string(ww.buf), ww.want) {
			ww.done = true
			close(ww.seen)
		}
	}
	return ww.w.Write(p)
}

// splitFlags separates "ARGS... -- MOAT_FLAGS..." at the first "--".
func splitFlags(args []string) (own, moat []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

// cmdMCP runs one MCP session with the SDK client against `moat mcp`:
//
//	mcp [-elicit accept|noapprove|decline|cancel|error] [-reason TEXT] [-roots URI,...] tools|call NAME ARGS_JSON [-- MOAT_MCP_FLAGS]
//
// tools prints every listed tool (name, title, annotations, inputSchema) as
// indented JSON, sorted by name. call prints the result's text and fails
// when it is an isError result, like `moat tool`. With -elicit the client
// declares elicitation and answers every request as told, printing the
// request's message to stderr (error: the client's dialog fails; -reason:
// the form's reason field). The session ends by closing the server's
// stdin, and the server must then exit 0 on its own.
func cmdMCP(ts *testscript.TestScript, neg bool, args []string) {
	own, moatFlags := splitFlags(args)
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	elicit := fs.String("elicit", "", "declare elicitation and answer: accept, noapprove, decline, cancel or error")
	reason := fs.String("reason", "", "with -elicit noapprove or decline: the reason the form carries")
	overHTTP := fs.Bool("http", false, "serve with --listen 127.0.0.1:0 --token-file $WORK/.mcp-token and talk Streamable HTTP")
	token := fs.String("token", "", "with -http: send this token instead of the file's")
	concurrent := fs.Int("concurrent", 0, "with -http and call: also make this many calls at once, from five more clients, each of which must get the same answer")
	roots := fs.String("roots", "", "announce these roots (comma-separated URIs), and wait for the server to log what it made of them")
	if err := fs.Parse(own); err != nil || fs.NArg() < 1 {
		ts.Fatalf("usage: mcp [-elicit ANSWER] tools|call NAME ARGS_JSON [-- FLAGS]")
	}
	op := fs.Args()
	if (op[0] == "tools" && len(op) != 1) || (op[0] == "call" && len(op) != 3) || (op[0] != "tools" && op[0] != "call") {
		ts.Fatalf("usage: mcp [-elicit ANSWER] tools|call NAME ARGS_JSON [-- FLAGS]")
	}

	stderr := &lockedWriter{w: ts.Stderr()}
	opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	var rootsLogged chan struct{}
	if *roots != "" {
		opts.Capabilities.RootsV2 = &mcp.RootCapabilities{}
		rootsLogged = make(chan struct{})
		stderr.w = &watchWriter{w: ts.Stderr(), want: "client roots ignored", seen: rootsLogged}
	}
	if *elicit != "" {
		answer := *elicit
		opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Fprintf(stderr, "elicitation:\n%s\n", r.Params.Message)
			content := map[string]any{}
			if *reason != "" {
				content["reason"] = *reason
			}
			switch answer {
			case "accept":
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			case "noapprove":
				content["approve"] = false
				return &mcp.ElicitResult{Action: "accept", Content: content}, nil
			case "error":
				return nil, errors.New("the dialog crashed")
			}
			return &mcp.ElicitResult{Action: answer, Content: content}, nil
		}
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "moat-testscript", Version: "1"}, opts)
	if *roots != "" {
		for _, u := range strings.Split(*roots, ",") {
			client.AddRoots(&mcp.Root{URI: u})
		}
	}
	var cmd *exec.Cmd
	var cs *mcp.ClientSession
	var err error
	stop := func() {}
	if *overHTTP {
		cmd, stop = startHTTP(ts, stderr, moatFlags)
		defer stop()
		tok := *token
		if tok == "" {
			tok = strings.TrimSpace(ts.ReadFile(".mcp-token"))
		}
		hc := &http.Client{Transport: bearerTransport{tok}}
		tr := &mcp.StreamableClientTransport{Endpoint: ts.Getenv("MCP_URL"), HTTPClient: hc, MaxRetries: -1}
		cs, err = client.Connect(ctx, tr, nil)
		if err != nil {
			fmt.Fprintf(stderr, "connect: %v\n", err)
			cmd.Process.Signal(syscall.SIGTERM)
			stop()
			if !neg {
				ts.Fatalf("connecting over HTTP: %v", err)
			}
			return
		}
	} else {
		cmd = moatCmd(ts, stderr, moatFlags)
		// An hour: the server must exit on EOF, never because it was signalled.
		tr := &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Hour}
		cs, err = client.Connect(ctx, tr, nil)
		ts.Check(err)
	}
	if rootsLogged != nil {
		// The server asks for the roots in the background: the session
		// stays open until it has said what it made of them (a bounded
		// wait for an event, not a timed assertion).
		select {
		case <-rootsLogged:
		case <-time.After(time.Minute):
			ts.Fatalf("moat mcp never logged the client's roots")
		}
	}

	failed := false
	switch op[0] {
	case "tools":
		res, err := cs.ListTools(ctx, nil)
		ts.Check(err)
		sort.Slice(res.Tools, func(i, j int) bool { return res.Tools[i].Name < res.Tools[j].Name })
		type shown struct {
			Name        string               `json:"name"`
			Title       string               `json:"title,omitempty"`
			Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
			InputSchema any                  `json:"inputSchema"`
		}
		var out []shown
		for _, tl := range res.Tools {
			out = append(out, shown{tl.Name, tl.Title, tl.Annotations, tl.InputSchema})
		}
		b, err := json.MarshalIndent(out, "", "  ")
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "%s\n", b)
	case "call":
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: op[1], Arguments: json.RawMessage(op[2])})
		if err != nil {
			fmt.Fprintf(stderr, "protocol error: %v\n", err)
			failed = true
			break
		}
		for _, c := range res.Content {
			tc, ok := c.(*mcp.TextContent)
			if !ok {
				ts.Fatalf("result content is %T, want text", c)
			}
			fmt.Fprintln(ts.Stdout(), strings.TrimSuffix(tc.Text, "\n"))
		}
		failed = res.IsError
		if *concurrent > 0 {
			if !*overHTTP {
				ts.Fatalf("-concurrent needs -http")
			}
			want := fmt.Sprint(res.Content[0].(*mcp.TextContent).Text, res.IsError)
			if n := concurrentCalls(ts, opts, *concurrent, op[1], op[2], want); n > 0 {
				ts.Fatalf("%d of %d concurrent calls did not get the answer the first call got", n, *concurrent)
			}
			fmt.Fprintf(stderr, "%d concurrent calls from 5 clients: all answered alike\n", *concurrent)
		}
	}
	if err := cs.Close(); err != nil {
		ts.Fatalf("moat mcp did not exit cleanly after EOF: %v", err)
	}
	if *overHTTP {
		ts.Check(cmd.Process.Signal(syscall.SIGTERM))
		stop()
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		ts.Fatalf("moat mcp exit state after EOF: %v", cmd.ProcessState)
	}
	if failed != neg {
		if neg {
			ts.Fatalf("the call succeeded")
		}
		ts.Fatalf("the call failed")
	}
}

// startHTTP starts `moat mcp --listen 127.0.0.1:0 --token-file
// $WORK/.mcp-token FLAGS` and waits for its listening line; the script's
// MCP_URL is then the server's address. stop waits for the server to
// exit (it kills it first if it was not told to stop) and is idempotent.
func startHTTP(ts *testscript.TestScript, stderr io.Writer, flags []string) (*exec.Cmd, func()) {
	cmd := moatCmd(ts, nil, append([]string{"--listen", "127.0.0.1:0", "--token-file", ts.MkAbs(".mcp-token")}, flags...))
	pipe, err := cmd.StderrPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	lines := bufio.NewScanner(pipe)
	url := ""
	for url == "" && lines.Scan() {
		fmt.Fprintln(stderr, lines.Text())
		if rest, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
			url = rest
		}
	}
	if url == "" {
		cmd.Wait()
		ts.Fatalf("moat mcp --listen never said where it listens (%v)", cmd.ProcessState)
	}
	ts.Setenv("MCP_URL", url)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		for lines.Scan() {
			fmt.Fprintln(stderr, lines.Text())
		}
	}()
	var once sync.Once
	return cmd, func() {
		once.Do(func() {
			select {
			case <-copied: // it exited: its stderr is closed
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-copied
			}
			cmd.Wait()
		})
	}
}

// concurrentCalls makes n calls of tool at once over five new sessions of
// the server at $MCP_URL and returns how many were not answered want.
func concurrentCalls(ts *testscript.TestScript, opts *mcp.ClientOptions, n int, tool, args, want string) int {
	ctx := context.Background()
	hc := &http.Client{Transport: bearerTransport{strings.TrimSpace(ts.ReadFile(".mcp-token"))}}
	var wrong atomic.Int64
	var wg sync.WaitGroup
	for c := range 5 {
		tr := &mcp.StreamableClientTransport{Endpoint: ts.Getenv("MCP_URL"), HTTPClient: hc, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("moat-testscript-", c), Version: "1"}, opts).Connect(ctx, tr, nil)
		ts.Check(err)
		defer cs.Close()
		for i := c; i < n; i += 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
				if err != nil || len(res.Content) != 1 || fmt.Sprint(res.Content[0].(*mcp.TextContent).Text, res.IsError) != want {
					wrong.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	return int(wrong.Load())
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// cmdTSClient runs the official TypeScript SDK's client
// (testdata/mcpclient/client.mjs) against `moat mcp`:
//
//	tsclient stdio|http [-- MOAT_MCP_FLAGS]
//
// over stdio (the client starts moat mcp) or Streamable HTTP (moat mcp
// --listen, started as the mcp command's -http does), and copies the
// client's lines to stdout. The client's packages are installed with npm
// ci (as make mcp-clients does) when they are not there; scripts skip
// this command where node is not installed ([!exec:node]).
func cmdTSClient(ts *testscript.TestScript, neg bool, args []string) {
	own, moatFlags := splitFlags(args)
	if neg || len(own) != 1 || (own[0] != "stdio" && own[0] != "http") {
		ts.Fatalf("usage: tsclient stdio|http [-- FLAGS]")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "mcpclient"))
	ts.Check(err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		npm := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		npm.Dir = dir
		if out, err := npm.CombinedOutput(); err != nil {
			ts.Fatalf("installing the TypeScript SDK (npm ci in %s, as make mcp-clients does): %v\n%s", dir, err, out)
		}
	}
	stderr := &lockedWriter{w: ts.Stderr()}
	var node *exec.Cmd
	var server *exec.Cmd
	stop := func() {}
	if own[0] == "stdio" {
		bin, err := exec.LookPath("moat")
		ts.Check(err)
		node = exec.Command("node", append([]string{filepath.Join(dir, "client.mjs"), "stdio", bin, "mcp"}, moatFlags...)...)
	} else {
		server, stop = startHTTP(ts, stderr, moatFlags)
		defer stop()
		tok := strings.TrimSpace(ts.ReadFile(".mcp-token"))
		node = exec.Command("node", filepath.Join(dir, "client.mjs"), "http", ts.Getenv("MCP_URL"), tok)
	}
	node.Dir = ts.Getenv("WORK")
	node.Env = os.Environ()
	for _, k := range []string{"WORK", "HOME", "TMPDIR", "PATH", "MOAT_CACHE_DIR", "MOAT_ISOLATE", "OLLAMA_HOST"} {
		node.Env = append(node.Env, k+"="+ts.Getenv(k))
	}
	node.Stdout = ts.Stdout()
	node.Stderr = stderr
	err = node.Run()
	if server != nil {
		server.Process.Signal(syscall.SIGTERM)
		stop()
		if code := server.ProcessState.ExitCode(); code != 0 {
			ts.Fatalf("moat mcp --listen exited %d after SIGTERM", code)
		}
	}
	if err != nil {
		ts.Fatalf("the TypeScript client: %v", err)
	}
}

// cmdMCPRaw talks to `moat mcp` as a client written in any language would:
//
//	mcpraw [-term|-int] REQUESTS_FILE [-- MOAT_MCP_FLAGS]
//
// Each line of REQUESTS_FILE is written to the server's stdin as is; after
// a line with an "id" it reads stdout up to the response with that id, and
// after a line that is not JSON up to a parse error (-32700). A line
// "@pad N LINE" sends LINE with PAD replaced by N bytes of x (a message
// too large for a script file).
// Every line the server writes is copied to the script's stdout. Then it
// closes stdin (or, with -term or -int, sends SIGTERM or SIGINT with stdin
// still open) and requires exit status 0.
func cmdMCPRaw(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("mcpraw does not support !")
	}
	own, moatFlags := splitFlags(args)
	fs := flag.NewFlagSet("mcpraw", flag.ContinueOnError)
	term := fs.Bool("term", false, "end with SIGTERM instead of EOF")
	intr := fs.Bool("int", false, "end with SIGINT (Ctrl-C) instead of EOF")
	if err := fs.Parse(own); err != nil || fs.NArg() != 1 {
		ts.Fatalf("usage: mcpraw [-term|-int] REQUESTS_FILE [-- FLAGS]")
	}
	reqs := ts.ReadFile(fs.Arg(0))
	cmd := moatCmd(ts, ts.Stderr(), moatFlags)
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	out := bufio.NewReader(stdout)
	for _, line := range strings.Split(reqs, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "@pad "); ok {
			n, tmpl, _ := strings.Cut(rest, " ")
			size, err := strconv.Atoi(n)
			ts.Check(err)
			line = strings.Replace(tmpl, "PAD", strings.Repeat("x", size), 1)
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		malformed := json.Unmarshal([]byte(line), &msg) != nil
		if malformed {
			msg.ID = json.RawMessage("null") // on purpose: the reply is a parse error, with the id when it could be read
		}
		_, err := io.WriteString(stdin, line+"\n")
		ts.Check(err)
		for msg.ID != nil {
			got, err := out.ReadString('\n')
			if err != nil {
				ts.Fatalf("reading the response to id %s: %v", msg.ID, err)
			}
			fmt.Fprint(ts.Stdout(), got)
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Error  struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(got), &resp) != nil {
				ts.Fatalf("stdout line is not JSON-RPC: %q", got)
			}
			if resp.Method == "" && (string(resp.ID) == string(msg.ID) || malformed && resp.Error.Code == -32700) {
				break
			}
		}
	}
	switch {
	case *term:
		ts.Check(cmd.Process.Signal(syscall.SIGTERM))
	case *intr:
		ts.Check(cmd.Process.Signal(syscall.SIGINT))
	default:
		stdin.Close()
	}
	rest, _ := io.ReadAll(out)
	ts.Stdout().Write(rest)
	if err := cmd.Wait(); err != nil {
		ts.Fatalf("moat mcp: %v", err)
	}
	if *term || *intr {
		stdin.Close()
	}
}
