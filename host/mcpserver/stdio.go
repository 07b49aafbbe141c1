package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes is the largest JSON-RPC message read from the
// client: the SDK's own default, large enough for any tools/call moat
// serves (the biggest argument is a proposed file, at most 8 MiB before
// JSON escaping).
const DefaultMaxMessageBytes = mcp.DefaultMaxLineLength

// idPrefixBytes is how much of an oversized message is kept to find its
// id, so the client's pending request gets an error instead of waiting
// forever. "id" comes before "params" in every client we know of.
const idPrefixBytes = 64 << 10

// StdioTransport is the MCP stdio transport (newline-delimited JSON-RPC, as
// the SDK's IOTransport) made robust against what a client may send:
//
//   - A line that is not JSON is answered with a JSON-RPC parse error
//     (-32700), and the session goes on. Its id is the message's when the
//     id could be read before the fault (a client waiting on it gets its
//     answer), else null. Valid JSON is never a parse error: a number too
//     large for a float64 (1e400) goes to the SDK, whose error carries the
//     id.
//   - A line that is JSON but not a JSON-RPC message (no "jsonrpc":"2.0", an
//     id that is an object, an empty batch, a batch in a protocol version
//     that has none) is answered with -32600 Invalid Request, with the
//     message's id when it has one, and the session goes on.
//   - A message larger than MaxMessageBytes is skipped without being held
//     in memory and answered with -32600 (with its id when the first
//     64 KiB show it), and the session goes on.
//
// Replies to requests already in flight are not lost: the SDK never sees
// the bad line. Nor are they lost at the end of the input: a client that
// sends its requests and closes the server's stdin (a script, or a client
// shutting down as the MCP spec describes) still gets every reply, since
// the end of input reaches the SDK only once the requests passed on have
// been answered (or after DrainTimeout).
//
// Why a wrapper: the SDK's stdio connection (go-sdk v1.8.0, mcp/transport.go
// ioConn and its read loop) returns the first decoding error, or its frame
// limit error, from Connection.Read; jsonrpc2 then closes the connection,
// so one malformed line ends the session with no -32700 reply and drops
// the replies still in flight, and a message over MaxLineLength closes it
// too. Nothing in IOTransport configures that. To report upstream: answer
// parse errors as JSON-RPC 2.0 section 5.1 says and keep reading; skip
// oversized frames with an error reply. When the SDK does, this can go.
//
// The wrapper sits on the byte stream, below the SDK's connection: it
// passes each valid line through unchanged to an IOTransport (batching,
// version negotiation and everything else stay the SDK's), and writes its
// own replies through the same writer, one whole line per Write, under
// the same lock as the SDK's messages.
type StdioTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxMessageBytes is the largest message accepted, not counting its
	// newline; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Logger receives one line per message refused; nil discards.
	Logger *slog.Logger
	// DrainTimeout bounds the wait for replies at the end of the input;
	// 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
}

// DefaultDrainTimeout is how long the end of input waits for the replies
// still owed: longer than a tool call may take, so that only a request the
// SDK never answers is cut off.
const DefaultDrainTimeout = 2 * time.Minute

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	limit := t.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	drain := t.DrainTimeout
	if drain <= 0 {
		drain = DefaultDrainTimeout
	}
	owed := &owed{ids: map[string]bool{}, asking: map[string]bool{}, closed: make(chan struct{})}
	w := &lineWriter{w: t.Writer, owed: owed}
	f := &lineFilter{src: bufio.NewReaderSize(t.Reader, 64<<10), out: w, limit: limit, log: log, owed: owed, drain: drain}
	inner := &mcp.IOTransport{
		Reader: readCloser{f, t.Reader, owed},
		Writer: w,
		// The filter enforces the limit before the SDK sees a byte.
		MaxLineLength: -1,
	}
	return inner.Connect(ctx)
}

// lineWriter serialises whole-line writes from the SDK and the filter, and
// crosses off each reply the SDK writes.
type lineWriter struct {
	mu   sync.Mutex
	w    io.WriteCloser
	owed *owed
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	l.owed.answered(p)
	return n, err
}

// owed is the set of the client's requests passed to the SDK and not yet
// answered, by id, and of the server's requests to the client (an
// approval dialog) not yet answered by it.
type owed struct {
	mu   sync.Mutex
	ids  map[string]bool
	none chan struct{} // closed when ids becomes empty; nil while it is
	// asking counts the server's requests the client has not answered:
	// after the end of input they never will be, so the drain stops.
	asking map[string]bool
	closed chan struct{} // closed by release
	once   sync.Once
}

// release ends any wait: the session is closing.
func (o *owed) release() { o.once.Do(func() { close(o.closed) }) }

// asked records the ids of the calls (requests with an id) in msg, one
// message or a batch.
func (o *owed) asked(msg []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range elements(msg) {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &r) != nil {
			continue
		}
		if r.Method == "" {
			delete(o.asking, string(validID(r.ID))) // the client's answer to the server
		} else if id := validID(r.ID); id != nil {
			if len(o.ids) == 0 {
				o.none = make(chan struct{})
			}
			o.ids[string(id)] = true
		}
	}
}

// answered crosses off the ids of the responses in p (one line, a
// message or a batch); requests the server sends the client are not
// responses.
func (o *owed) answered(p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.ids) == 0 && !bytes.Contains(p, []byte(`"method"`)) {
		return // nothing owed and no request to the client: skip the parse
	}
	for _, m := range elements(bytes.TrimSpace(p)) {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &r) != nil {
			continue
		}
		if r.Method == "" {
			delete(o.ids, string(validID(r.ID)))
		} else if id := validID(r.ID); id != nil {
			o.asking[string(id)] = true
		}
	}
	if len(o.ids) == 0 && o.none != nil {
		close(o.none)
		o.none = nil
	}
}

// wait returns once nothing is owed, once the server waits on the client
// (which has stopped talking), when the session closes, or after d.
func (o *owed) wait(d time.Duration) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		o.mu.Lock()
		none, asking := o.none, len(o.asking)
		o.mu.Unlock()
		if none == nil || asking > 0 {
			return
		}
		select {
		case <-none:
			return
		case <-o.closed:
			return
		case <-tick.C:
		}
	}
}

// elements is a batch's messages, or msg itself.
func elements(msg []byte) []json.RawMessage {
	if len(msg) > 0 && msg[0] == '[' {
		var elems []json.RawMessage
		json.Unmarshal(msg, &elems)
		return elems
	}
	return []json.RawMessage{msg}
}

func (l *lineWriter) Close() error { return l.w.Close() }

// readCloser reads from the filter and closes the real input, which is
// how the SDK unblocks a pending read when the session ends.
type readCloser struct {
	io.Reader
	c    io.Closer
	owed *owed
}

func (r readCloser) Close() error {
	r.owed.release()
	return r.c.Close()
}

// lineFilter reads the client's lines and passes on only those the SDK can
// take without ending the session, answering the others itself.
type lineFilter struct {
	src     *bufio.Reader
	out     io.Writer
	limit   int
	log     *slog.Logger
	pending []byte // the rest of the line being passed on
	err     error  // the input's error, returned once pending is empty
	owed    *owed  // requests passed on and not yet answered
	drain   time.Duration
	// noBatch is set once the client asked for a protocol version without
	// JSON-RPC batches (2025-06-18 and later, or one the server does not
	// know, which it answers with its newest): the SDK ends the session on
	// a batch then, so the filter answers it.
	noBatch bool
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			// The SDK ends the session at the end of input: first let it
			// answer what it was asked.
			f.owed.wait(f.drain)
			return 0, f.err
		}
		line, size, err := f.readLine()
		if err != nil {
			f.err = err
		}
		if size == 0 && line == nil {
			continue
		}
		if ok := f.check(line, size); ok {
			f.owed.asked(bytes.TrimSpace(line))
			f.pending = append(line, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// readLine reads the next line, without its newline. size is the line's
// full length; when it is over the limit, line holds only its first
// idPrefixBytes and the rest was read and dropped.
func (f *lineFilter) readLine() (line []byte, size int, err error) {
	for {
		chunk, err := f.src.ReadSlice('\n')
		size += len(chunk)
		if size <= f.limit+1 {
			line = append(line, chunk...)
		} else if len(line) < idPrefixBytes {
			line = append(line, chunk[:min(len(chunk), idPrefixBytes-len(line))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(chunk); n > 0 && chunk[n-1] == '\n' {
			size--
			if m := len(line); m > 0 && line[m-1] == '\n' {
				line = line[:m-1]
			}
		}
		return line, size, err
	}
}

// check decides whether line goes to the SDK, and answers it when not.
func (f *lineFilter) check(line []byte, size int) bool {
	if size > f.limit {
		f.reply(idOfPrefix(line), jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("message too large: %d bytes, more than the %d this server reads; nothing was done", size, f.limit))
		return false
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return false // blank lines are not messages; the SDK would skip them too
	}
	if !json.Valid(trimmed) {
		// Only the syntax is checked here: a number no Go type can hold
		// (1e400) is valid JSON, for the SDK to refuse with the request's
		// id. The error carries the id whenever it comes before the fault.
		var v any
		err := json.Unmarshal(trimmed, &v)
		f.reply(idOfPrefix(trimmed), jsonrpc.CodeParseError, "parse error: "+err.Error())
		return false
	}
	if trimmed[0] == '[' {
		return f.checkBatch(trimmed)
	}
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		f.reply(idOf(trimmed), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return false
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		known := false
		for _, v := range supportedVersions() {
			known = known || v == p.ProtocolVersion
		}
		f.noBatch = !known || p.ProtocolVersion >= "2025-06-18"
	}
	return true
}

// checkBatch accepts a batch the SDK can serve: not empty, every element a
// message, and a protocol version that has batches.
func (f *lineFilter) checkBatch(line []byte) bool {
	var elems []json.RawMessage
	json.Unmarshal(line, &elems)
	switch {
	case len(elems) == 0:
		f.reply(nil, jsonrpc.CodeInvalidRequest, "invalid request: empty batch")
		return false
	case f.noBatch:
		f.reply(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not part of MCP since protocol version 2025-06-18; send each message on its own line")
		return false
	}
	for _, e := range elems {
		if _, err := jsonrpc.DecodeMessage(e); err != nil {
			f.reply(nil, jsonrpc.CodeInvalidRequest, "invalid request in batch: "+err.Error())
			return false
		}
	}
	return true
}

// reply writes a JSON-RPC error response. id is the raw id, or nil for
// null (JSON-RPC 2.0: when the id cannot be known).
func (f *lineFilter) reply(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	f.log.Warn("mcp: refused a client message", "code", code, "id", string(id), "error", msg)
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	f.out.Write(append(b, '\n'))
}

// idOf returns the id of a JSON object when it is a valid JSON-RPC id (a
// string or a number), or nil.
func idOf(msg []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return nil
	}
	return validID(m.ID)
}

// idOfPrefix finds the top-level "id" in the beginning of a JSON object
// that was cut short, when it comes before the cut.
func idOfPrefix(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil // the cut is inside this value
		}
		if key == "id" {
			return validID(val)
		}
	}
	return nil
}

func validID(raw json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s[0] == '{' || s[0] == '[' || s == "true" || s == "false" {
		return nil
	}
	return json.RawMessage(s)
}
