package toolspec

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
)

// TestToolTable holds the places a tool is defined to each other: every
// model-facing row of proto's registry has everything the host needs,
// every read-only one a guest handler and wire fields for
// proto.DecodeArgs, and every internal one a handler too.
func TestToolTable(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(true); !slices.Equal(got, proto.Tools()) {
		t.Fatalf("toolspec offers %v; proto.Tools() names %v", got, proto.Tools())
	}
	help := Help()
	for _, d := range defs() {
		tool, _ := c.Lookup(d.Name)
		if tool.Title == "" || tool.Description == "" {
			t.Errorf("%s: no title or description", d.Name)
		}
		if !strings.HasPrefix(tool.Usage, d.Name+" {") || !strings.Contains(help, "  "+tool.Usage+"\n") {
			t.Errorf("%s: usage %q missing from help:\n%s", d.Name, tool.Usage, help)
		}
		for _, arg := range append([]string{tool.Summary.Subject, tool.Summary.In}, tool.PathFields...) {
			if _, ok := tool.Schema.Properties[arg]; arg != "" && !ok {
				t.Errorf("%s: summary or path field %q is not an argument", d.Name, arg)
			}
		}
		if tool.Summary.Subject == "" {
			t.Errorf("%s: the activity line has no subject", d.Name)
		}
		if tool.ReadOnly == tool.Write || tool.Destructive && tool.ReadOnly {
			t.Errorf("%s: contradictory hints: write %v, read-only %v, destructive %v", d.Name, tool.Write, tool.ReadOnly, tool.Destructive)
		}
		if tools.Handles(d.Name) == d.Is(proto.Writes) {
			t.Errorf("%s: guest handler %v for a tool with write %v (the guest runs every read-only tool, and no write)", d.Name, tools.Handles(d.Name), d.Is(proto.Writes))
		}
		if !d.Is(proto.Writes) {
			if err := proto.DecodeArgs([]byte(`{}`), reflect.New(argType(d)).Interface()); err != nil {
				t.Errorf("%s: proto.DecodeArgs: %v", d.Name, err)
			}
		}
	}
}

func TestInternalCallsRunInTheGuest(t *testing.T) {
	for _, d := range proto.Registry() {
		if d.Is(proto.Internal) && (!tools.Handles(d.Name) || d.Is(proto.Writes) || d.Description != "") {
			t.Errorf("%s: internal, but handled %v, write %v, description %q", d.Name, tools.Handles(d.Name), d.Is(proto.Writes), d.Description)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, d := range defs() {
		if d.Name == proto.ReadFile {
			if got, want := usage(d), "read_file {path, offset?, limit?}"; got != want {
				t.Errorf("usage = %q, want %q", got, want)
			}
		}
	}
	if !strings.HasSuffix(Help(), "  (propose_write and propose_edit show a diff on the terminal and write only after you type y)\n") {
		t.Errorf("help has no note on the write proposals:\n%s", Help())
	}
}
