package proto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// argTypes are every argument struct the guest decodes, fresh: the
// registry's, but for the write proposals (the gate's).
func argTypes() []any {
	var out []any
	for _, d := range Registry() {
		if !d.Is(Writes) {
			out = append(out, d.NewArgs())
		}
	}
	return out
}

var wireInputs = []string{
	`{"id":1,"tool":"grep","args":{"pattern":"x"},"limits":{}}`,
	`{"id":18446744073709551615,"tool":"read_file","args":{"path":"a b\u00e9\ud83d\ude00"},"limits":{"max_read_bytes":9223372036854775807,"max_results":3,"no_ignore":true,"shard":1,"shards":2,"time_limit_ns":30000000000}}`,
	` { "ID" : 2 , "Tool":"stat", "args" : null , "extra": [1, {"a": [true, false, null]}, "s"], "limits": null } `,
	`{"id":3,"tool":"x","args":{"a":1},"limits":{"shards":2},"limits":{"shard":1}}`,
	`{"id":4,"tool":"\ud800\u0041\udc00\ud800\udc00 \u002F \/ \b\f\n\r\t \\ \""}`,
	"{\"id\":5,\"tool\":\"\xff\xfe raw \xc3\"}",
	`{"id":6,"tool":"K\u212a"}`,
	`{"id":7,"tool":"grep_shard","args":{"weights":[]},"weights":[{"path":"y","bytes":3},null,{"PATH":"\u00e9","x":[1],"bytes":-2}],"Weights":[]}`,
	`null`,
	`{}`,
	``,
	`{"id":-1}`,
	`{"id":1.5}`,
	`{"id":1e3}`,
	`{"id":01}`,
	`{"id":"1"}`,
	`{"tool":5}`,
	`{"limits":{"no_ignore":"true"}}`,
	`{"limits":{"max_results":1.0}}`,
	`{"limits":{"max_results":99999999999999999999}}`,
	`{"id":1}x`,
	`{"id":1,}`,
	`{"id" 1}`,
	`{"tool":"a` + "\n" + `b"}`,
	`{"tool":"\x"}`,
	`{"tool":"\u12"}`,
	`{"extra":[1,]}`,
	`{"extra":-}`,
	`{"extra":1.}`,
	`{"extra":.5}`,
	`{"extra":tru}`,
	`[1]`,
	`"s"`,
}

// TestWireMatchesEncodingJSON decodes every input with the guest's codec
// and with encoding/json, which the host uses, and wants the same result.
func TestWireMatchesEncodingJSON(t *testing.T) {
	for _, in := range wireInputs {
		checkRequest(t, []byte(in))
		for _, v := range argTypes() {
			checkArgs(t, []byte(in), v)
		}
	}
	for _, in := range []string{
		`{"path":"p","offset":2,"limit":3}`,
		`{"pattern":"a.*b","path":"src","glob":"**/*.go","ignore_case":true,"max_results":5}`,
		`{"pattern":"a","shard":1,"shards":3,"Shards":4}`,
		`{"pattern":"a","shard":1,"shards":2,"weights":[{"path":"cmd/compile","bytes":20971520,"entries":9},{"path":"a\u00e9\ud800","bytes":0},null,{}]}`,
		`{"pattern":"a","weights":[]}`,
		`{"pattern":"a","weights":null}`,
		`{"pattern":"a","weights":[{"path":"x"}],"Weights":[{"bytes":1},{"path":"z","path":"w"}]}`,
		`{"pattern":"a","weights":[{"path":"x"},]}`,
		`{"pattern":"a","weights":[{"path":"x"} {"path":"y"}]}`,
		`{"pattern":"a","weights":[1]}`,
		`{"pattern":"a","weights":["x"]}`,
		`{"pattern":"a","weights":{"path":"x"}}`,
		`{"pattern":"a","weights":[{"path":1}]}`,
		`{"pattern":"a","weights":[{"bytes":1.5}]}`,
		`{"pattern":"a","weights":[[]]}`,
		`{"pattern":"a","weights":[`,
		`{"PATH":"upper","Pattern":"mixed"}`,
		`{"path":"p","old_text":"a","new_text":"b","replace_all":true,"content":"c"}`,
		`{"offset":"2"}`,
		`{"ignore_case":1}`,
		`{"max_results":-3}`,
		`{"path":null,"offset":null}`,
		`  `,
	} {
		for _, v := range argTypes() {
			checkArgs(t, []byte(in), v)
		}
	}
}

func checkRequest(t *testing.T, in []byte) {
	t.Helper()
	got, gerr := DecodeRequest(in)
	var want Request
	werr := json.Unmarshal(in, &want)
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("DecodeRequest(%q): error %v, encoding/json: %v", in, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeRequest(%q) = %+v, encoding/json: %+v", in, got, want)
	}
}

func checkArgs(t *testing.T, in []byte, v any) {
	t.Helper()
	got := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	want := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	gerr := DecodeArgs(in, got)
	var werr error
	if len(bytes.Trim(in, " \t\r\n")) > 0 { // the guest treats absent arguments (JSON space only) as {}
		werr = json.Unmarshal(in, want)
	}
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("DecodeArgs(%q, %T): error %v, encoding/json: %v", in, v, gerr, werr)
	}
	// Which arguments were given is the decoder's alone to record.
	switch a := got.(type) {
	case *GrepArgs:
		a.BeforeGiven, a.AfterGiven = false, false
	case *GrepShardArgs:
		a.BeforeGiven, a.AfterGiven = false, false
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeArgs(%q, %T) = %+v, encoding/json: %+v", in, v, got, want)
	}
}

// TestArgFields sets each field of each argument struct through its json
// tag alone, so that a field added to a struct without teaching DecodeArgs
// fails here.
func TestArgFields(t *testing.T) {
	for _, v := range argTypes() {
		typ := reflect.TypeOf(v).Elem()
		for _, f := range reflect.VisibleFields(typ) {
			if f.Anonymous {
				continue // an embedded struct: its fields are visited on their own
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue // not an argument (GrepArgs.BeforeGiven)
			}
			var val string
			switch f.Type.Kind() {
			case reflect.String:
				val = `"v"`
			case reflect.Int, reflect.Int64:
				val = `7`
			case reflect.Bool:
				val = `true`
			case reflect.Slice:
				if f.Type.Elem() != reflect.TypeFor[FolderWeight]() {
					t.Fatalf("%s.%s: DecodeArgs has no case for %v", typ.Name(), f.Name, f.Type)
				}
				val = `[{"path":"v","bytes":7},{"path":"w"}]`
			default:
				t.Fatalf("%s.%s: DecodeArgs has no case for %v", typ.Name(), f.Name, f.Type)
			}
			in := []byte(`{"` + name + `":` + val + `}`)
			checkArgs(t, in, v)
			got := reflect.New(typ)
			if err := DecodeArgs(in, got.Interface()); err != nil || got.Elem().FieldByIndex(f.Index).IsZero() {
				t.Errorf("%s.%s (json %q) is not decoded: %v", typ.Name(), f.Name, name, err)
			}
		}
	}
	if err := DecodeArgs([]byte(`{}`), &Request{}); err == nil {
		t.Error("DecodeArgs took a type it does not know")
	}
}

// TestAppendResponse wants the bytes encoding/json writes.
func TestAppendResponse(t *testing.T) {
	for _, r := range []Response{
		{ID: 1, Text: "hello"},
		{ID: 0, Text: ""},
		{ID: 18446744073709551615, Text: "error: x", IsError: true},
		{ID: 4, Shard: json.RawMessage(`{"parts":[{"path":"a\n\"b","text":"a:1: x\n","hits":1,"cuts":[7]}],"more":true}`)},
		{ID: 5, Text: "x", IsError: true, Shard: json.RawMessage(`{"matches":null,"total":0}`)},
		{ID: 3, Text: "ctl \x00\x01\x1f\x7f \b\f\n\r\t \"q\" \\ <a>&amp; \u2028\u2029 é 😀 \xff\xfe \xc3 end"},
	} {
		checkResponse(t, r)
	}
}

func checkResponse(t *testing.T, r Response) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	got := append(AppendResponse(nil, &r), '\n')
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("AppendResponse(%+v)\n got %s\nwant %s", r, got, want.Bytes())
	}
}

// TestAppendGrepShard wants the bytes encoding/json writes.
func TestAppendGrepShard(t *testing.T) {
	for _, r := range []GrepShardResult{
		{},
		{Parts: []GrepPart{}},
		{Parts: []GrepPart{{Path: "a.go", Text: "a.go:1: x\n", Hits: 1}, {Path: "b\n.go\xff", Text: "", Hits: 0}}, More: true},
		{Parts: []GrepPart{{Path: "a.go", Text: "a.go:1: x\na.go-2- y\n", Hits: 2, Cuts: []int{10, 21}}}},
		{Parts: []GrepPart{}, Notes: []GrepNote{}},
		{Parts: []GrepPart{{Path: "a", Text: "a:1: x\n", Hits: 1, Cuts: []int{7}}}, More: true, StopAt: "b/<c>\xfe",
			Notes: []GrepNote{{At: "", Text: "x"}, {At: "d\n", Text: "[.gitignore] is \u2028 \x01"}}, MoreNotes: 3, TimeUp: "the time limit"},
		{Weights: []FolderWeight{}},
		{Parts: []GrepPart{}, Weights: []FolderWeight{{Path: "cmd/compile", Bytes: 20 << 20, Entries: 9}, {Path: "a\xff<b>", Bytes: 0, Entries: -1}, {Path: "", Bytes: -1}}, Notes: []GrepNote{{At: "", Text: "x"}}},
	} {
		checkGrepShard(t, r)
	}
}

func TestAppendGlobShard(t *testing.T) {
	for _, r := range []GlobShardResult{
		{},
		{Matches: []string{}},
		{Matches: []string{"a.go", "b/", "c\n\xff<&>"}, Total: 7},
		{Matches: []string{"x"}, Total: 1, Notes: []GrepNote{{At: "", Text: "x"}, {At: "d\n", Text: "\u2028"}}, MoreNotes: 2, TimeUp: "the time limit"},
	} {
		checkGlobShard(t, r)
	}
}

func checkGlobShard(t *testing.T, r GlobShardResult) { checkAppend(t, &r, AppendGlobShard) }

func checkGrepShard(t *testing.T, r GrepShardResult) { checkAppend(t, &r, AppendGrepShard) }

// checkAppend wants the bytes encoding/json (SetEscapeHTML(false)) writes
// for *r from appendTo.
func checkAppend[T any](t *testing.T, r *T, appendTo func([]byte, *T) []byte) {
	t.Helper()
	var esc bytes.Buffer
	enc := json.NewEncoder(&esc)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	want := bytes.TrimSuffix(esc.Bytes(), []byte("\n"))
	if got := appendTo(nil, r); !bytes.Equal(got, want) {
		t.Fatalf("%T %+v\n got %s\nwant %s", r, *r, got, want)
	}
}

// FuzzWire holds the codec to encoding/json on arbitrary input.
func FuzzWire(f *testing.F) {
	for _, in := range wireInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkRequest(t, in)
		checkArgs(t, in, &GrepArgs{})
		checkArgs(t, in, &ReadFileArgs{})
		checkArgs(t, in, &GrepShardArgs{})
		checkArgs(t, in, &GlobShardArgs{})
		checkResponse(t, Response{ID: 1, Text: string(in), IsError: len(in)%2 == 0})
		checkGrepShard(t, GrepShardResult{Parts: []GrepPart{{Path: string(in), Text: string(in), Hits: len(in)}}, More: len(in)%2 == 0})
		checkGrepShard(t, GrepShardResult{StopAt: string(in), Notes: []GrepNote{{At: string(in), Text: string(in)}}, MoreNotes: len(in), TimeUp: string(in)})
		checkGrepShard(t, GrepShardResult{Weights: []FolderWeight{{Path: string(in), Bytes: int64(len(in)), Entries: len(in) % 3}}})
		checkGlobShard(t, GlobShardResult{Matches: []string{string(in)}, Total: len(in), Notes: []GrepNote{{At: string(in), Text: string(in)}}, TimeUp: string(in)})
	})
}

// TestValidUTF8MovesCuts: each invalid byte becomes U+FFFD (3 bytes), as
// encoding/json writes it, and the offsets after it move by 2.
func TestValidUTF8MovesCuts(t *testing.T) {
	text := "a\xfe\n" + "b\n" + "\xff\xffc\n"
	got, cuts := ValidUTF8(text, []int{3, 5, 9})
	b, _ := json.Marshal(text)
	var want string
	json.Unmarshal(b, &want)
	if got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
	if want := []int{5, 7, 15}; !slices.Equal(cuts, want) {
		t.Fatalf("cuts %v, want %v", cuts, want)
	}
	for i, c := range cuts {
		if got[c-1] != '\n' {
			t.Errorf("cut %d at %d does not end a line in %q", i, c, got)
		}
	}
}

// BenchmarkAppendGrepShard is the encoding of a grep_shard answer of many
// hits, and of the response that carries it.
func BenchmarkAppendGrepShard(b *testing.B) {
	var text strings.Builder
	var cuts []int
	for i := range 2000 {
		fmt.Fprintf(&text, "net/http/server.go:%d: \tif err := w.conn.hijackLocked(\"x\"); err != nil { return nil, err } // %d\n", i+1, i)
		cuts = append(cuts, text.Len())
	}
	r := GrepShardResult{Parts: []GrepPart{{Path: "net/http/server.go", Text: text.String(), Hits: 2000, Cuts: cuts}}, More: true}
	var dst []byte
	b.SetBytes(int64(text.Len()))
	for b.Loop() {
		dst = AppendGrepShard(dst[:0], &r)
		dst = AppendResponse(nil, &Response{ID: 1, Text: string(dst)})
	}
}
