package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/moatdev/moat/host/mcpserver"
)

// httpFlags are moat mcp's Streamable HTTP flags.
type httpFlags struct {
	listen    string
	tokenFile string
}

func (h *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.listen, "listen", "", "serve MCP over Streamable HTTP at http://`ADDR`/mcp instead of stdio: HOST:PORT, :PORT or PORT (no host: 127.0.0.1 only; port 0: a free one); needs --token-file")
	fs.StringVar(&h.tokenFile, "token-file", "", "with --listen: the bearer token every request must carry is this `file`'s content; created with a new random token (mode 0600) if it does not exist")
	validate(fs, "listen", parsedBy(&h.listen, mcpserver.ListenAddress))
}

// check refuses flags that make no sense together, before anything starts.
func (h *httpFlags) check(rec *recordFlags) error {
	switch {
	case h.listen == "" && h.tokenFile != "":
		return usagef("--token-file is the token of --listen; without --listen moat mcp serves stdio, which needs none")
	case h.listen != "" && h.tokenFile == "":
		return usagef("--listen needs --token-file FILE: every HTTP request must carry the token in that file (created with a new random token if it does not exist)")
	case h.listen != "" && rec.file != "":
		return usagef("--record records one stdio session; it does not work with --listen yet")
	}
	return nil
}

// serve runs srv over Streamable HTTP until ctx ends (a signal).
func (h *httpFlags) serve(ctx context.Context, e *env, c *common, srv *mcpserver.Server, log *slog.Logger) error {
	token, created, err := readToken(h.tokenFile, e.source("token-file"), c.rootsOr()...)
	if err != nil {
		return err
	}
	addr, err := mcpserver.ListenAddress(h.listen)
	if err != nil {
		return usagef("%s: %v", e.source("listen"), err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	if created {
		fmt.Fprintf(e.stderr, "moat mcp: wrote a new token to %s\n", h.tokenFile)
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !isLoopback(host) {
		fmt.Fprintf(e.stderr, "moat mcp: warning: %s is reachable from other machines; only the token keeps them out (and the traffic is not encrypted)\n", ln.Addr())
	}
	fmt.Fprintf(e.stderr, "listening on %s\n", mcpserver.URL(ln))
	log.Info("moat mcp: listening", "url", mcpserver.URL(ln), "token_file", h.tokenFile)
	return srv.ServeHTTP(ctx, ln, mcpserver.HTTPOptions{Token: token})
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// maxTokenFileBytes bounds what is read of a token file.
const maxTokenFileBytes = 4 << 10

// readToken reads the bearer token from path, or creates the file with a
// new token when there is none. The file must be readable by its owner
// alone (where the system has such modes) and outside the root the tools
// serve, where the model could read it.
func readToken(path, from string, roots ...string) (token string, created bool, err error) {
	for _, root := range roots {
		if canon, err := filepath.Abs(root); err == nil {
			if c, err := filepath.EvalSymlinks(canon); err == nil {
				root = c
			}
		}
		if inside(path, root) {
			return "", false, usagef("%s %s is inside the root %s, where the tools could read it; keep the token outside", from, path, root)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		tok, err := mcpserver.NewToken()
		if err == nil {
			_, err = io.WriteString(f, tok+"\n")
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", false, fmt.Errorf("%s %s: %v", from, path, err)
		}
		return tok, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return "", false, fileError(from, path, err)
	}
	r, err := os.Open(path)
	if err != nil {
		return "", false, fileError(from, path, err)
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return "", false, fileError(from, path, err)
	}
	switch {
	case st.IsDir():
		return "", false, fileError(from, path, errors.New("is a folder, not a file"))
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0:
		return "", false, usagef("%s %s can be read or written by other users (mode %04o); make it private with chmod 600 %s", from, path, st.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxTokenFileBytes+1))
	if err != nil {
		return "", false, fileError(from, path, err)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case len(b) > maxTokenFileBytes:
		return "", false, usagef("%s %s: more than %d bytes; it should hold the token alone", from, path, maxTokenFileBytes)
	case len(tok) < 16:
		return "", false, usagef("%s %s: the token must be at least 16 characters (delete the file and moat makes a new one)", from, path)
	case strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return "", false, usagef("%s %s: the token must be one word of printable ASCII (it travels in an HTTP header)", from, path)
	}
	return tok, false, nil
}
