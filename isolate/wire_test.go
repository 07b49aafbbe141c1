package isolate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/moatdev/moat/guest/proto"
)

// TestWireTrailer: a request's findings follow its line raw, and the
// stream stays in step for the next line; a reply's the same; an
// announced length out of bounds is refused, not read.
func TestWireTrailer(t *testing.T) {
	var pipe bytes.Buffer
	recall := bytes.Repeat([]byte("\n\x00{\"x\"}"), 1000) // newlines and JSON inside: read by length, not by line
	first := request{Request: proto.Request{ID: 1, Tool: proto.Grep}, Recall: recall, RecallBytes: len(recall)}
	second := request{Request: proto.Request{ID: 2, Tool: proto.Stat}}
	for _, req := range []request{first, second} {
		if err := writeLine(&pipe, req, req.Recall); err != nil {
			t.Fatal(err)
		}
	}
	if bytes.Contains(pipe.Bytes(), []byte(`"recall":`)) || !bytes.Contains(pipe.Bytes(), []byte(`"recall_bytes":7000`)) {
		t.Fatalf("the request's line is not its length alone: %.200q", pipe.Bytes())
	}
	r := bufio.NewReader(&pipe)
	for _, want := range []request{first, second} {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var got request
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if got.Recall, err = readTrailer(r, got.RecallBytes); err != nil {
			t.Fatal(err)
		}
		if got.ID != want.ID || !bytes.Equal(got.Recall, want.Recall) {
			t.Fatalf("read request %d with %d bytes of findings, want %d with %d", got.ID, len(got.Recall), want.ID, len(want.Recall))
		}
	}
	for _, n := range []int{-1, maxTrailer + 1} {
		if _, err := readTrailer(bytes.NewReader(nil), n); err == nil {
			t.Errorf("a trailer of %d bytes was read", n)
		}
	}
	if _, err := readTrailer(bytes.NewReader([]byte("short")), 10); err == nil {
		t.Error("a trailer cut short was read")
	}
}
