package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bounds of the Streamable HTTP transport, when HTTPOptions leaves them
// at zero.
const (
	// DefaultMaxSessions is how many MCP sessions may be open at once: a
	// person's chat front end, an inspector and an IDE with room to spare.
	// A new session beyond it is refused with 503 until one ends (the
	// client's DELETE, or SessionTimeout).
	DefaultMaxSessions = 32
	// DefaultSessionTimeout closes a session that has had no request for
	// this long, so a client that vanished does not hold a slot forever.
	DefaultSessionTimeout = 30 * time.Minute
)

// HTTPOptions configure the Streamable HTTP transport ([Server.Handler],
// [Server.ServeHTTP]).
type HTTPOptions struct {
	// Token is the bearer token every request must carry
	// (Authorization: Bearer TOKEN). It is required: a handler without one
	// refuses every request.
	Token string
	// MaxBodyBytes bounds one request's body; a larger one is refused with
	// 413 and nothing is done. 0 means DefaultMaxMessageBytes, the bound of
	// the stdio transport.
	MaxBodyBytes int64
	// MaxSessions bounds the sessions open at once; 0 means
	// DefaultMaxSessions.
	MaxSessions int
	// SessionTimeout closes idle sessions; 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
}

// NewToken returns a new random bearer token: 32 bytes from crypto/rand, in
// hex.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Handler serves the server's tools over MCP's Streamable HTTP transport,
// with the official SDK's handler (sessions, SSE streams, server-to-client
// requests such as the approval dialog, and its own DNS-rebinding check of
// the Host header on a loopback listener). In front of it, in this order:
//
//  1. An Origin header that is not a loopback origin (http or https, on
//     localhost, 127.0.0.0/8 or ::1, any port) is refused with 403: a web
//     page elsewhere must not drive the tools through the user's browser
//     (DNS rebinding, cross-site requests). Requests without Origin (every
//     non-browser client) pass. A loopback origin is answered with CORS
//     headers, so a web client served from localhost can connect.
//  2. A request without Authorization: Bearer TOKEN, or with another token,
//     is refused with 401 (compared in constant time).
//  3. A body over MaxBodyBytes is refused with 413 (by its Content-Length
//     before anything is read, else by the SDK as it reads).
//  4. A request that would open a session beyond MaxSessions is refused
//     with 503.
//
// Refusals are JSON-RPC error bodies (id null) with a message that says
// what to change, which the SDK's clients surface as the call's error.
func (s *Server) Handler(opt HTTPOptions) http.Handler {
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = DefaultMaxMessageBytes
	}
	if opt.MaxSessions <= 0 {
		opt.MaxSessions = DefaultMaxSessions
	}
	if opt.SessionTimeout <= 0 {
		opt.SessionTimeout = DefaultSessionTimeout
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{
		Logger:              s.sdkLog,
		SessionTimeout:      opt.SessionTimeout,
		MaxRequestBodyBytes: opt.MaxBodyBytes,
	})
	return &guard{s: s, opt: opt, next: sdk}
}

// guard is the checks in front of the SDK's handler (see Server.Handler).
type guard struct {
	s    *Server
	opt  HTTPOptions
	next http.Handler
	// opening serialises the requests that open a session, so that the
	// count of open sessions and the one being opened never pass the bound.
	opening sync.Mutex
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" {
		if !LoopbackOrigin(origin) {
			g.refuse(w, r, http.StatusForbidden, fmt.Sprintf("forbidden: requests from the web origin %q are refused; moat mcp serves only clients on this machine (no Origin header, or a loopback one)", origin))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent) // a preflight carries no credentials
			return
		}
	}
	if !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="moat"`)
		msg := "unauthorized: this server needs the header Authorization: Bearer TOKEN, with the token from the file moat mcp --token-file names"
		if scheme, _, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); strings.EqualFold(scheme, "Bearer") {
			msg = "unauthorized: wrong bearer token (it is the content of the file moat mcp --token-file names)"
		}
		g.refuse(w, r, http.StatusUnauthorized, msg)
		return
	}
	if r.ContentLength > g.opt.MaxBodyBytes {
		g.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request too large: %d bytes, more than the %d this server reads; nothing was done", r.ContentLength, g.opt.MaxBodyBytes))
		return
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		// The SDK opens a session for this request.
		g.opening.Lock()
		defer g.opening.Unlock()
		if n := g.s.sessions(); n >= g.opt.MaxSessions {
			w.Header().Set("Retry-After", "10")
			g.refuse(w, r, http.StatusServiceUnavailable, fmt.Sprintf("too many sessions: %d are open, the most this server holds; close one (or wait %v for an idle one to time out) and try again", n, g.opt.SessionTimeout))
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) authorized(r *http.Request) bool {
	if g.opt.Token == "" {
		return false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(g.opt.Token)) == 1
}

// refuse answers a request with an HTTP status and a JSON-RPC error body.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	g.s.log.Warn("mcp http: refused a request", "status", status, "method", r.Method, "remote", r.RemoteAddr, "error", msg)
	code := int64(jsonrpc.CodeInvalidRequest)
	if status == http.StatusServiceUnavailable {
		code = -32000 // a server error: try again later
	}
	b, _ := json.Marshal(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", nil, jsonrpc.Error{Code: code, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// sessions counts the open sessions.
func (s *Server) sessions() int {
	n := 0
	for range s.srv.Sessions() {
		n++
	}
	return n
}

// LoopbackOrigin reports whether a request's Origin header names a page
// served from this machine: http or https on localhost, 127.0.0.0/8 or ::1.
func LoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP serves [Server.Handler] at /mcp on ln until ctx is cancelled (a
// signal), then closes every session and stops; it returns nil after such
// a clean stop. Anything but /mcp is 404. The server bounds how long a
// client may take to send its headers and how large they may be.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opt HTTPOptions) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler(opt))
	var mu sync.Mutex
	fresh := map[net.Conn]bool{} // connections that never carried a request
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
		ConnState: func(c net.Conn, st http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			if st == http.StateNew {
				fresh[c] = true
			} else {
				delete(fresh, c)
			}
		},
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Open SSE streams never go idle: end the sessions first, then the
	// connections. Shutdown waits 5 s for a connection a client opened
	// and never used (a Transport dials ahead of need): close those now.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }() // first of all, it stops accepting
	s.closeSessions()
	mu.Lock()
	for c := range fresh {
		c.Close()
	}
	mu.Unlock()
	if err := <-shut; err != nil {
		hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// closeSessions closes every open session.
func (s *Server) closeSessions() {
	for ss := range s.srv.Sessions() {
		ss.Close()
	}
}

// ListenAddress is the address moat mcp --listen listens on for a given
// value: a host not named (":8080", "8080") is the loopback address
// 127.0.0.1, so only a named host ("0.0.0.0:8080", "[::]:0", a LAN
// address) is reachable from other machines. Port 0 picks a free port.
func ListenAddress(v string) (string, error) {
	if v == "" {
		return "", errors.New("want HOST:PORT, :PORT or PORT (port 0 picks a free one)")
	}
	if !strings.Contains(v, ":") {
		v = ":" + v
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("want HOST:PORT, :PORT or PORT: %v", err)
	}
	if p, err := net.LookupPort("tcp", port); port == "" || err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("%q is not a port", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// URL is the address clients use for a listener: http://HOST:PORT/mcp.
func URL(ln net.Listener) string {
	return "http://" + ln.Addr().String() + "/mcp"
}
