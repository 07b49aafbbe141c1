package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/rogpeppe/go-internal/testscript"
)

// stubserver VAR FILE: serve the fixed replies FILE holds, a JSON object
// of "METHOD /path" -> {"status": N, "body": "..."} (any other request:
// 404), on a loopback port for the rest of the script, and set VAR to its
// URL. For a server that is not quite Ollama (a proxy's page, another
// program on the port), which the fake model server never is.
func cmdStubServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: stubserver VAR FILE")
	}
	var routes map[string]struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &routes); err != nil {
		ts.Fatalf("stubserver: %s: %v", args[1], err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rt, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(rt.Status)
		io.WriteString(w, rt.Body)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
}
