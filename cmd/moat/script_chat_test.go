package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
	// jsonshape [-lines] FILE: print the shape of the JSON in FILE (stdout
	// or stderr for the last command's), one "path type" line per value,
	// so a script pins a schema without its varying values; -lines reads
	// one document per line and prefixes each with its "type"; -types
	// prints only each line's "type", in order.
	cmds["jsonshape"] = func(ts *testscript.TestScript, neg bool, args []string) {
		lines := len(args) == 2 && (args[0] == "-lines" || args[0] == "-types")
		if neg || len(args) != 1 && !lines {
			ts.Fatalf("usage: jsonshape [-lines|-types] FILE")
		}
		types := lines && args[0] == "-types"
		text := ts.ReadFile(args[len(args)-1])
		docs := []string{text}
		if lines {
			docs = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		}
		seen := map[string]bool{}
		for _, d := range docs {
			var v any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				ts.Fatalf("jsonshape: %v in %q", err, d)
			}
			prefix := ""
			if m, ok := v.(map[string]any); ok && lines {
				prefix = fmt.Sprint(m["type"]) + " "
			}
			if types {
				fmt.Fprintln(ts.Stdout(), strings.TrimSpace(prefix))
				continue
			}
			var out []string
			shape(&out, "", v)
			for _, l := range out {
				if l = prefix + l; !seen[l] {
					seen[l] = true
					fmt.Fprintln(ts.Stdout(), l)
				}
			}
		}
	}
	return cmds
}

// shape lists the paths and types in v, keys sorted, arrays as [].
func shape(out *[]string, path string, v any) {
	name := path
	if name == "" {
		name = "."
	}
	switch v := v.(type) {
	case map[string]any:
		*out = append(*out, name+" object")
		for _, k := range slices.Sorted(maps.Keys(v)) {
			shape(out, path+"."+k, v[k])
		}
	case []any:
		*out = append(*out, name+" array")
		for _, e := range v {
			shape(out, path+"[]", e)
		}
	case string:
		*out = append(*out, name+" string")
	case float64:
		*out = append(*out, name+" number")
	case bool:
		*out = append(*out, name+" bool")
	case nil:
		*out = append(*out, name+" null")
	}
}
