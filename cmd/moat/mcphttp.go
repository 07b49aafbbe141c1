package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"

	"github.com/moatdev/moat/host/assembly"
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
	token, created, err := assembly.TokenFile(h.tokenFile, e.source("token-file"), c.rootsOr()...)
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
