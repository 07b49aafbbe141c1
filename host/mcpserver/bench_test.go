package mcpserver

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The transports' own cost per call, the guest faked: one read_file after
// another through the SDK's client, over stdio (moat's StdioTransport on
// pipes) and over Streamable HTTP (the guarded handler on a loopback
// listener). The real binary's figures, guest included, are in the
// README's performance section.
func BenchmarkCallStdio(b *testing.B) {
	eng, _ := newEngine(b, &fakeExec{}, false)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go New(eng, Options{}).Serve(ctx, &mcp.IOTransport{Reader: sr, Writer: sw})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs)
}

func BenchmarkCallHTTP(b *testing.B) {
	eng, _ := newEngine(b, &fakeExec{}, false)
	hs := httptest.NewServer(New(eng, Options{}).Handler(HTTPOptions{Token: testToken}))
	defer hs.Close()
	cs, err := connect(b, hs.URL, testToken, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCalls(b, cs)
}

func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	p := &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}}
	for b.Loop() {
		if res, err := cs.CallTool(context.Background(), p); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
