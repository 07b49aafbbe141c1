package toolspec

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
)

// TestToolTable holds the three places a tool is defined to each other:
// every model-facing row of proto's registry has a row here with
// everything the host needs, and every read-only one a guest handler and
// wire fields for proto.DecodeArgs.
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
		tool, _ := c.Lookup(d.name)
		if tool.Title == "" || tool.Description == "" {
			t.Errorf("%s: no title or description", d.name)
		}
		if !strings.HasPrefix(tool.Usage, d.name+" {") || !strings.Contains(help, "  "+tool.Usage+"\n") {
			t.Errorf("%s: usage %q missing from help:\n%s", d.name, tool.Usage, help)
		}
		for _, arg := range append([]string{tool.Summary.Subject, tool.Summary.In}, tool.PathFields...) {
			if _, ok := tool.Schema.Properties[arg]; arg != "" && !ok {
				t.Errorf("%s: summary or path field %q is not an argument", d.name, arg)
			}
		}
		if tool.Summary.Subject == "" {
			t.Errorf("%s: the activity line has no subject", d.name)
		}
		if tool.ReadOnly == tool.Write || tool.Destructive && tool.ReadOnly {
			t.Errorf("%s: contradictory hints: write %v, read-only %v, destructive %v", d.name, tool.Write, tool.ReadOnly, tool.Destructive)
		}
		if tools.Handles(d.name) == d.write {
			t.Errorf("%s: guest handler %v for a tool with write %v (the guest runs every read-only tool, and no write)", d.name, tools.Handles(d.name), d.write)
		}
		if (len(d.volatile) > 0) != proto.ToolIs(d.name, proto.Volatile) {
			t.Errorf("%s: volatile lines %v, but proto's registry says Volatile %v", d.name, d.volatile, proto.ToolIs(d.name, proto.Volatile))
		}
		if !d.write {
			if err := proto.DecodeArgs([]byte(`{}`), reflect.New(d.args).Interface()); err != nil {
				t.Errorf("%s: proto.DecodeArgs: %v", d.name, err)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	for _, d := range defs() {
		if d.name == proto.ReadFile {
			if got, want := usage(d), "read_file {path, offset?, limit?}"; got != want {
				t.Errorf("usage = %q, want %q", got, want)
			}
		}
	}
	if !strings.HasSuffix(Help(), "  (propose_write and propose_edit show a diff on the terminal and write only after you type y)\n") {
		t.Errorf("help has no note on the write proposals:\n%s", Help())
	}
}
