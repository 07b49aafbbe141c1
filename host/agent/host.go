package agent

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
)

// DefaultHost is where Ollama listens unless OLLAMA_HOST says otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// ParseHost reads a server address the way Ollama reads OLLAMA_HOST:
// "host:port", ":port", "host" and full URLs are accepted; a missing scheme
// means http and a missing port 11434 (80 or 443 for an explicit http or
// https URL without one).
func ParseHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultHost
	}
	port := "11434"
	scheme, rest, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, rest = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return nil, fmt.Errorf("host %q: scheme must be http or https", s)
	}
	hostport, path, _ := strings.Cut(rest, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	} else {
		port = p
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if strings.ContainsAny(host, " /?#@") {
		return nil, fmt.Errorf("host %q: not a host name", s)
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path = strings.Trim(path, "/"); path != "" {
		u.Path = "/" + path
	}
	return u, nil
}

// unreachable recognises a failure to connect (as opposed to a server that
// answered badly) and names its cause briefly.
func unreachable(err error) (string, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return "", false
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection refused", true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "no such host " + dns.Name, true
	}
	return op.Err.Error(), true
}

// nameList joins model names from a server for a message, escaped: a
// server is not trusted to name its models harmlessly.
func nameList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Sanitize(n, false)
	}
	return strings.Join(out, ", ")
}
