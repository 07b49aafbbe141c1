// Package mcpserver offers moat's sandboxed tools to any Model Context
// Protocol client (desktop chat apps, IDE assistants, agent frameworks) over
// the official Go SDK.
//
// Nothing here decides what a call may do. Every tools/call goes to
// [engine.Engine.Call], the same path `moat tool` and the agent loop take:
// the same schemas, the same validation texts, the same deny-list, resolver,
// limits and isolated guest. The SDK is given each tool's schema only to
// advertise it; the handlers are raw, so the SDK never rejects or rewrites
// arguments before moat's own validation sees them, and a refused call comes
// back as an isError result with exactly the text `moat tool` prints.
//
// # The root
//
// The sandbox root is fixed by the person who configured the server (moat
// mcp --root). MCP clients may announce "roots" of their own; they are
// ignored. A root is advice from the client, and the client is driven by a
// model that reads untrusted files: letting it widen the boundary would turn
// a prompt injection into a way out of the sandbox (peer servers that trust
// client roots or compare paths as strings shipped exactly such escapes,
// CVE-2025-53109 and CVE-2025-53110). A client that wants a narrower view
// can be configured with a narrower --root. When a client announces roots,
// the log says once what it announced and what is served instead.
//
// # Writes
//
// propose_write and propose_edit are offered only to a client that can ask
// a person: one that declared the elicitation capability (form mode) at
// initialize. Other clients never see them listed, and a call to them is
// refused. See [Approver] for how a proposal is shown and applied.
//
// # Protocol versions
//
// The server speaks the session-based protocol (2024-11-05 up to
// 2025-11-25): approval needs a server-to-client elicitation request inside
// a tools/call, which the sessionless 2026-07-28 protocol replaces with
// multi-round-trip results. Clients that ask for 2026-07-28 are told which
// versions are supported and fall back, as the SDK's own client does.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/host/toolspec"
)

// supportedVersions lists the MCP protocol versions the server negotiates,
// newest first: those in which elicitation is a server-to-client request.
func supportedVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// Options configure a Server.
type Options struct {
	// Name and Version identify the server to clients ("moat", "v0.3.0").
	Name, Version string
	// Logger receives the server's log: one line per call and the SDK's
	// warnings. It must not write to the transport (stdout). Nil discards.
	Logger *slog.Logger
	// MaxCalls bounds the tool calls run at once, over all sessions; 0
	// means DefaultMaxCalls. MaxWaiting bounds the calls that wait for one
	// of those slots; 0 means DefaultMaxWaiting. A call beyond both is
	// refused at once, as an isError result saying the server is busy.
	MaxCalls, MaxWaiting int
	// Root is the folder served (moat mcp --root), named in the log line
	// that says a client's announced roots are ignored.
	Root string
	// Roots, when the workspace has several, are their labels: the
	// instructions and the answer to another server's
	// list_allowed_directories name them.
	Roots []string
}

// The bounds on concurrent calls when Options leaves them at zero. The
// guest runs about one call per core at a time anyway (host/runner's
// pool); the rest wait their turn here rather than as goroutines inside
// the engine.
const (
	DefaultMaxCalls   = 16
	DefaultMaxWaiting = 1024
)

// Engine is what the server needs of host/engine's *engine.Engine: the
// tools, their catalogue, and the one path every call takes. (moat mcp
// --record puts a recorder around the calls.)
type Engine interface {
	Tools() []*toolspec.Tool
	Catalog() *toolspec.Catalog
	Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result
}

// Server is an MCP server for one engine. Build it with [New], run it with
// [Server.Serve] (one session, stdio) or [Server.ServeHTTP] (Streamable
// HTTP, several sessions at once, all on the one engine).
type Server struct {
	eng    Engine
	log    *slog.Logger
	sdkLog *slog.Logger // the SDK's warnings and errors
	srv    *mcp.Server
	slots  *slots
	names  []string // the tools registered, in the order added
	root   string
	labels []string // Options.Roots
}

// New registers the engine's tools on an MCP server. The write proposals are
// registered only when the engine has a Proposer (an [Approver]); they are
// then listed per session, only to clients that support elicitation.
func New(eng Engine, opt Options) *Server {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opt.Name == "" {
		opt.Name = "moat"
	}
	s := &Server{eng: eng, log: log, slots: newSlots(opt.MaxCalls, opt.MaxWaiting), root: opt.Root, labels: opt.Roots}
	// The SDK logs every connect and disconnect at Info; keep its
	// warnings and errors, and one line per call of our own.
	s.sdkLog = slog.New(atLeast{log.Handler(), slog.LevelWarn})
	s.srv = mcp.NewServer(&mcp.Implementation{Name: opt.Name, Title: "moat: sandboxed folder tools", Version: opt.Version}, &mcp.ServerOptions{
		Logger: s.sdkLog,
		// The tool list never changes during a session, and moat does not
		// forward its log to the client: advertise tools and nothing else.
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: supportedVersions(),
		Instructions:              instructions(eng, opt.Roots),
		InitializedHandler:        s.initialized,
	})
	for _, t := range eng.Tools() {
		s.srv.AddTool(mcpTool(t), s.handler(t.Name))
		s.names = append(s.names, t.Name)
		if batches(t.Name) {
			s.srv.AddTool(readFilesTool(), s.handler(ReadFiles))
			s.names = append(s.names, ReadFiles)
		}
	}
	s.srv.AddReceivingMiddleware(hideWrites(eng.Catalog()), s.unknownTools(eng.Catalog()))
	return s
}

// rootsListTimeout bounds the wait for a client's answer to roots/list,
// asked only to say in the log what is ignored.
const rootsListTimeout = 5 * time.Second

// initialized says, once a session is set up, what of moat's setup it
// leaves unused: the write proposals for a client that cannot ask its user
// (no form elicitation), and the roots a client announces.
func (s *Server) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	if ss := req.Session; ss != nil && !canElicit(ss) {
		for _, t := range s.eng.Tools() {
			if t.Write {
				s.log.Info("write proposals not offered", "why", "the client declared no form elicitation, so it cannot show its user the approval dialog; nothing is written, and nothing audited, in this session")
				break
			}
		}
	}
	s.clientRoots(ctx, req)
}

// clientRoots logs, once a session is initialized and only if the client
// announced the roots capability, which roots it lists and that they are
// ignored: the root served is --root's. The client is asked in the
// background; the session never waits for the answer, and a client that
// does not give it is logged as having announced roots it did not list.
func (s *Server) clientRoots(ctx context.Context, req *mcp.InitializedRequest) {
	ss := req.Session
	if ss == nil || ss.InitializeParams() == nil || ss.InitializeParams().Capabilities == nil || ss.InitializeParams().Capabilities.RootsV2 == nil {
		return
	}
	go func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rootsListTimeout)
		defer cancel()
		res, err := ss.ListRoots(lctx, nil)
		if err != nil {
			s.log.Info("client roots ignored", "announced", "the roots capability (roots/list failed: "+err.Error()+")", "served", s.root)
			return
		}
		uris := make([]string, 0, len(res.Roots))
		for _, r := range res.Roots {
			if r != nil {
				uris = append(uris, r.URI)
			}
		}
		s.log.Info("client roots ignored", "announced", strings.Join(uris, " "), "served", s.root)
	}()
}

// instructions tells the client's model what the server is for.
func instructions(eng Engine, roots []string) string {
	var reads, writes []string
	for _, t := range eng.Tools() {
		if t.Write {
			writes = append(writes, t.Name)
		} else {
			reads = append(reads, t.Name)
			if batches(t.Name) {
				reads = append(reads, ReadFiles)
			}
		}
	}
	s := "Tools to explore one folder (the workspace) read-only: " + strings.Join(reads, ", ") + ". " +
		"Paths are relative to the workspace root; nothing outside it can be reached, and secrets (.env, keys, .git/) are refused."
	if len(roots) > 1 {
		s = "Tools to explore several folders (the workspace's roots: " + strings.Join(roots, ", ") + ") read-only: " + strings.Join(reads, ", ") + ". " +
			"Every path starts with its root's name (" + roots[0] + "/README.md), and list_dir \".\" lists the roots; nothing outside them can be reached, and secrets (.env, keys, .git/) are refused."
	}
	if len(writes) > 0 {
		s += " " + strings.Join(writes, " and ") + ", when listed, change a file only after the user approves the diff."
	}
	return s
}

// mcpTool describes a catalogue tool for MCP, with the shared schema, and
// the title and hints of the tool table that a client can use to decide
// what needs confirmation.
func mcpTool(t *toolspec.Tool) *mcp.Tool {
	closed := false
	ann := &mcp.ToolAnnotations{Title: t.Title, OpenWorldHint: &closed}
	if t.Destructive {
		destructive := true
		ann.DestructiveHint = &destructive
	}
	if t.ReadOnly {
		ann.ReadOnlyHint = true
		ann.IdempotentHint = true // changing nothing, a second call is the first
	}
	mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.Schema, Annotations: ann}
	if out := outputSchema(t.Name); out != nil {
		mt.OutputSchema = out // an interface: a nil *Schema in it would not be nil
	}
	return mt
}

// handler runs one call through the engine. Protocol errors are reserved for
// protocol problems; everything about the call itself, from a malformed
// argument to a refused path, is an isError result the model can read.
func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		ctx = withSession(ctx, req.Session)
		var args []byte
		if req.Params != nil {
			args = req.Params.Arguments
		}
		release, busy := s.slots.acquire(ctx)
		if busy != "" {
			s.log.Warn("call refused", "tool", name, "error", busy)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "error: " + busy}}, IsError: true}, nil
		}
		defer release()
		var out *mcp.CallToolResult
		if name == ReadFiles {
			out = s.readFiles(ctx, args)
		} else {
			res := s.eng.Call(ctx, name, args)
			out = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, IsError: res.IsError}
			if !res.IsError {
				out.StructuredContent = structured(name, res.Text)
			}
		}
		s.log.Info("call", "tool", name, "is_error", out.IsError, "bytes", textLen(out), "took", time.Since(start).Round(time.Millisecond))
		return out, nil
	}
}

func textLen(r *mcp.CallToolResult) int {
	n := 0
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += len(tc.Text)
		}
	}
	return n
}

// hideWrites removes the write proposals from tools/list for a session whose
// client cannot ask a person to approve them.
func hideWrites(cat *toolspec.Catalog) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok || method != "tools/list" {
				return res, err
			}
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if ss != nil && canElicit(ss) {
				return res, err
			}
			kept := []*mcp.Tool{}
			for _, t := range lr.Tools {
				if ct, ok := cat.Lookup(t.Name); ok && ct.Write {
					continue
				}
				kept = append(kept, t)
			}
			out := *lr
			out.Tools = kept
			return &out, nil
		}
	}
}

// Serve runs the server on t until the client closes the connection (EOF
// on stdin) or ctx is cancelled (a signal). Both are a clean end: Serve
// returns nil, also when the client went away while the server still had
// something to send (a cancelled elicitation's notice).
//
// An *mcp.IOTransport (stdio) is served through [StdioTransport], so a
// malformed or oversized message from the client is answered instead of
// ending the session.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	if st, ok := t.(*mcp.IOTransport); ok {
		t = &StdioTransport{Reader: st.Reader, Writer: st.Writer, MaxMessageBytes: max(st.MaxLineLength, 0), Logger: s.log}
	}
	// The SDK's Server.Run, without its ERROR record ("server run
	// cancelled") for what is here a clean stop: a signal.
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		return nil
	case err = <-ended:
	}
	if err == nil || ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// atLeast drops records below a level.
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(as), h.min}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.min}
}
