package recording

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moatdev/moat/host/mcpserver"
	"github.com/moatdev/moat/host/toolspec"
)

// MCP wraps moat mcp's engine: every call a client makes, and the exact
// text it returned. A session recorded this way (Session.Command "mcp")
// has no model replies: each client request is a turn of its own.
func (r *Recorder) MCP(e mcpserver.Engine) mcpserver.Engine {
	return mcpEngine{r.Tools(e), e.Catalog()}
}

type mcpEngine struct {
	dispatcher
	cat *toolspec.Catalog
}

// dispatcher is what the Recorder's Tools returns: an agent.Dispatcher.
type dispatcher interface {
	Tools() []*toolspec.Tool
	Call(ctx context.Context, name string, args json.RawMessage) toolspec.Result
}

func (e mcpEngine) Catalog() *toolspec.Catalog { return e.cat }

// replayMCP plays an MCP recording's client side: moat's MCP server
// (host/mcpserver) runs in this process on the sandbox, a client connected
// to it in memory makes every recorded call in order, and the approval
// dialogs are answered in the client, from the recorded decisions. So a
// write goes through the same Approver, elicitation and gate as it did.
func replayMCP(ctx context.Context, rec *Recording, again *Recorder, tools dispatcher, roots []rootForm) error {
	withCat, ok := tools.(interface{ Catalog() *toolspec.Catalog })
	if !ok {
		return errors.New("recording: an MCP replay needs the engine's catalogue")
	}
	srv := mcpserver.New(again.MCP(mcpEngine{tools, withCat.Catalog()}), mcpserver.Options{Name: "moat"})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, st) }()

	current := -1 // the call being replayed; the client makes one at a time
	opts := &mcp.ClientOptions{}
	if rec.Session.Writes == "ask" {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if current < 0 || current >= len(rec.Calls) || rec.Calls[current].Review == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return dialogAnswer(rec.Calls[current].Review)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "moat replay", Version: "1"}, opts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		return fmt.Errorf("replay: connecting to the MCP server: %w", err)
	}
	for i, c := range rec.Calls {
		current = i
		// A call of an absolute path inside the root ("<root>/x") names
		// this root's.
		a := absArgs(c.Tool, c.Args, roots)
		var args any = json.RawMessage(a)
		if !json.Valid([]byte(a)) {
			args = a
		}
		// A tool error is a result; only the protocol failing is an error,
		// and the comparison shows what the recorder saw.
		cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args})
	}
	cs.Close()
	cancel()
	<-served
	return nil
}

// dialogAnswer is how the person answered the approval dialog, as the
// client sends it back (host/mcpserver's Elicitation reads it).
func dialogAnswer(rv *Review) (*mcp.ElicitResult, error) {
	switch rv.Outcome {
	case "approved":
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	case "declined":
		if rv.Reason == "" {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false, "reason": rv.Reason}}, nil
	case "failed":
		return nil, errors.New("the approval dialog failed (as recorded)")
	}
	// unanswered, and anything the client never decides itself
	return &mcp.ElicitResult{Action: "cancel"}, nil
}
