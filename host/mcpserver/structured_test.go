package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/guest/proto"
)

// statExec answers stat with the guest's text for a link whose name needs
// quoting.
type statExec struct{ fakeExec }

const statText = "path: \"odd\\nname\"\nkind: symlink\nsize: 12 bytes\nmode: 0777 (lrwxrwxrwx)\nmodified: 2026-12-01T10:00:00Z\naccessed: 2026-12-01T11:00:00Z\nchanged: 2026-12-01T12:00:00Z\ntarget: outside the sandbox (not followed)"

func (s *statExec) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	s.fakeExec.Exec(ctx, req)
	if req.Tool == proto.Stat {
		return proto.Response{ID: req.ID, Text: statText}, nil
	}
	return proto.Response{ID: req.ID, Text: "guest ran " + req.Tool}, nil
}

func TestStatStructured(t *testing.T) {
	eng, _ := newEngine(t, &statExec{}, false)
	ctx := context.Background()
	cs := connectInMemory(t, eng)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if has := tl.OutputSchema != nil; has != (tl.Name == proto.Stat || tl.Name == ReadFiles) {
			t.Errorf("%s: outputSchema %v", tl.Name, tl.OutputSchema)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: proto.Stat, Arguments: map[string]any{"path": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if text(res) != statText {
		t.Errorf("the text changed: %q", text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got StatOutput
	json.Unmarshal(b, &got)
	if got.Path != "odd\nname" || got.Kind != "symlink" || got.Size == nil || *got.Size != 12 || got.Modified != "2026-12-01T10:00:00Z" || got.Target != "outside the sandbox (not followed)" {
		t.Errorf("structuredContent = %s", b)
	}
	if got.Mode != "0777" || got.Permissions != "lrwxrwxrwx" || got.Accessed != "2026-12-01T11:00:00Z" || got.Changed != "2026-12-01T12:00:00Z" || got.Created != "" {
		t.Errorf("structuredContent's mode and times = %s", b)
	}
	// A file the host did not describe has no mode.
	old := structured(proto.Stat, "path: a\nkind: file\nsize: 1 bytes\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-12-01T10:00:00Z").(StatOutput)
	if old.Mode != "" || old.Permissions != "" || old.Modified != "2026-12-01T10:00:00Z" {
		t.Errorf("an undescribed mode: %+v", old)
	}
	// Refusals carry no structuredContent; other tools have none.
	for _, c := range []struct {
		tool string
		args any
	}{{proto.Stat, map[string]any{"path": "../x"}}, {proto.ListDir, map[string]any{"path": "."}}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.StructuredContent != nil {
			t.Errorf("%s %v: structuredContent %v, %v", c.tool, c.args, res.StructuredContent, err)
		}
	}
}

// connectInMemory serves eng to an SDK client without elicitation over
// in-memory transports; the session and the server end with t.
func connectInMemory(t *testing.T, eng Engine) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go New(eng, Options{}).Serve(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
