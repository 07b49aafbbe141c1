package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/moatdev/moat/guest/proto"
)

func TestRunServesLines(t *testing.T) {
	fsys := fstest.MapFS{"a.txt": {Data: []byte("hello\n")}}
	big := strings.Repeat("x", 3<<20) // a request longer than the read buffer
	in := strings.Join([]string{
		`{"id":1,"tool":"read_file","args":{"path":"a.txt"}}`,
		``,
		`{"id":2,"tool":"stat","args":{"path":"../x"}}`,
		`{"id":3,"tool":"read_file","args":{"path":"` + big + `"}}`,
		`{"id":4,"tool":"list_dir","args":{}}`, // no final newline
	}, "\n")
	var out, errOut bytes.Buffer
	if code := run(fsys, strings.NewReader(in), &out, &errOut); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	var got []proto.Response
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var r proto.Response
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad response line %q: %v", line, err)
		}
		got = append(got, r)
	}
	want := []proto.Response{
		{ID: 1, Text: "hello\n"},
		{ID: 2, Text: "error: path escapes the sandbox: ../x", IsError: true},
		{ID: 3, Text: "error: no such file or directory: " + big, IsError: true},
		{ID: 4, Text: "a.txt"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d responses, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("response %d = %.200v, want %.200v", i, got[i], want[i])
		}
	}
}

func TestRunRejectsMalformedInput(t *testing.T) {
	var out, errOut bytes.Buffer
	in := `{"id":1,"tool":"list_dir","args":{}}` + "\n{not json\n" + `{"id":2,"tool":"list_dir","args":{}}` + "\n"
	if code := run(fstest.MapFS{}, strings.NewReader(in), &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("%d responses before the bad line, want 1", n)
	}
	if !strings.HasPrefix(errOut.String(), "moat-tools: malformed request: ") {
		t.Errorf("stderr %q", errOut.String())
	}
}
