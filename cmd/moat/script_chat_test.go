package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/moatdev/moat/moattest"
)

// TestChat runs testscripts/chat: moat ask and moat chat against the fake
// model server, over both wire formats.
func TestChat(t *testing.T) { testscript.Run(t, scriptParams(t, "chat", llmCmds())) }

// llmCmds are the script commands that drive the fake model server
// (moattest's: fakellm, llmsent, llmcount, replay), and jsonshape.
func llmCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := moattest.Commands()
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
