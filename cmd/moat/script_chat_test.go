package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/moatdev/moat/host/fakellm"
)

// TestChat runs testscripts/chat: moat ask and moat chat against the fake
// model server, over both wire formats.
func TestChat(t *testing.T) { testscript.Run(t, scriptParams(t, "chat", llmCmds())) }

// llmCmds are the script commands that drive the fake model server.
func llmCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	var servers sync.Map // *testscript.TestScript -> *fakellm.Server
	server := func(ts *testscript.TestScript) *fakellm.Server {
		s, ok := servers.Load(ts)
		if !ok {
			ts.Fatalf("no fake server: run fakellm first")
		}
		return s.(*fakellm.Server)
	}
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// fakellm SCRIPT.json: start the fake model server; OLLAMA_HOST and FAKELLM point at it.
		"fakellm": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: fakellm SCRIPT.json")
			}
			sc, err := fakellm.ParseScript([]byte(ts.ReadFile(args[0])))
			ts.Check(err)
			srv := fakellm.Start(sc)
			if _, loaded := servers.LoadOrStore(ts, srv); loaded {
				srv.Close()
				ts.Fatalf("fakellm: a server is already running in this script")
			}
			ts.Defer(func() {
				servers.Delete(ts)
				srv.Close()
			})
			ts.Setenv("OLLAMA_HOST", srv.URL)
			ts.Setenv("FAKELLM", srv.URL)
		},
		// llmsent [N]: print the chat requests the fake received (or only the Nth), one "PATH BODY" line each.
		"llmsent": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) > 1 {
				ts.Fatalf("usage: llmsent [N]")
			}
			reqs := server(ts).ChatRequests()
			if len(args) == 1 {
				n, err := strconv.Atoi(args[0])
				if err != nil || n < 1 || n > len(reqs) {
					ts.Fatalf("llmsent: want a request number from 1 to %d, got %q", len(reqs), args[0])
				}
				reqs = reqs[n-1 : n]
			}
			for _, r := range reqs {
				var b bytes.Buffer
				if err := json.Compact(&b, r.Body); err != nil {
					b.Reset()
					b.Write(r.Body)
				}
				fmt.Fprintf(ts.Stdout(), "%s %s\n", r.Path, b.String())
			}
		},
		// llmcount N: assert the fake received exactly N chat requests.
		"llmcount": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: llmcount N")
			}
			want, err := strconv.Atoi(args[0])
			ts.Check(err)
			if got := len(server(ts).ChatRequests()); got != want {
				ts.Fatalf("fake server got %d chat requests, want %d", got, want)
			}
		},
	}
	return cmds
}
