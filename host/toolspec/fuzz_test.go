package toolspec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/toolspec"
)

// argTypes are the structs the guest (or the gate) decodes each tool's
// arguments into: what Validate's promise is measured against.
var argTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, d := range proto.Registry() {
		if !d.Is(proto.Internal) {
			m[d.Name] = reflect.TypeOf(d.NewArgs()).Elem()
		}
	}
	return m
}()

// FuzzValidate is the argument parser's contract, tried on any input:
// Validate never panics; every refusal is an ErrInvalid whose text is one
// line for the model; and whatever it accepts has the right type, i.e. its
// canonical form decodes into the tool's argument struct with no unknown
// field and no lossy number, every path field passes policy.Clean, and
// validating the canonical form again accepts it unchanged.
func FuzzValidate(f *testing.F) {
	for _, s := range []struct{ tool, args string }{
		{"read_file", `{"path":"a.txt"}`},
		{"read_file", `{"path":"a.txt","offset":2,"limit":3}`},
		{"read_file", `{"path":"a.txt","offset":1e300}`},
		{"read_file", `{"path":"a.txt","limit":9223372036854775808}`},
		{"read_file", `{"path":"a.txt","limit":-0}`},
		{"read_file", `{"path":"a.txt","offset":1.0}`},
		{"read_file", `{"path":"a","path":"../x"}`},
		{"read_file", `{"p\u0061th":"../x"}`},
		{"read_file", `{"path":"a\u0000b"}`},
		{"read_file", `{"path":3}`},
		{"read_file", `null`},
		{"read_file", `[]`},
		{"read_file", ` {"path":"x"} `},
		{"grep", `{"pattern":"x","max_results":1e18,"ignore_case":true,"glob":"**/*.go"}`},
		{"grep", `{"pattern":"x","path":"..\\y"}`},
		{"glob", `{"pattern":"**","path":"~"}`},
		{"stat", `{"path":"file:///etc"}`},
		{"list_dir", `{"path":"C:\\x"}`},
		{"propose_write", `{"path":".git/hooks/pre-commit","content":"x"}`},
		{"propose_edit", `{"path":"a","old_text":"x","new_text":"y","replace_all":true}`},
		{"propose_edit", `{"path":"a","edits":[{"old_text":"x","new_text":"y"},{"old_text":1},"z",{"old_text":"q","new_text":"r","x":null}]}`},
		{"nope", `{}`},
	} {
		f.Add(s.tool, []byte(s.args))
	}
	cat, err := toolspec.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tool string, raw []byte) {
		tl, canon, err := cat.Validate(tool, raw)
		if err != nil {
			if !errors.Is(err, toolspec.ErrInvalid) {
				t.Fatalf("%s %q: error %v is not ErrInvalid", tool, raw, err)
			}
			if tl != nil || canon != nil {
				t.Fatalf("%s %q: refused but returned a tool or arguments", tool, raw)
			}
			return
		}
		typ, ok := argTypes[tool]
		if !ok || tl.Name != tool {
			t.Fatalf("accepted tool %q (as %v)", tool, tl)
		}
		dec := json.NewDecoder(bytes.NewReader(canon))
		dec.DisallowUnknownFields()
		v := reflect.New(typ)
		if err := dec.Decode(v.Interface()); err != nil {
			t.Fatalf("%s %q: accepted, but its canonical form %s does not decode into %v: %v", tool, raw, canon, typ, err)
		}
		// The decoded struct must say exactly what the canonical form says:
		// no number rounded, no field dropped.
		back, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		var want, got map[string]any
		json.Unmarshal(canon, &want)
		json.Unmarshal(back, &got)
		for k, w := range want {
			if g, ok := got[k]; ok && !reflect.DeepEqual(g, w) {
				t.Fatalf("%s %q: field %s is %v in the canonical form but %v once decoded", tool, raw, k, w, g)
			}
		}
		for _, fld := range tl.PathFields {
			p := reflect.Indirect(v).FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, fld) })
			if !p.IsValid() || p.String() == "" {
				continue
			}
			if _, err := policy.Clean(p.String()); err != nil {
				t.Fatalf("%s %q: accepted a path that policy.Clean refuses: %v", tool, raw, err)
			}
		}
		_, again, err := cat.Validate(tool, canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("%s: canonical form %s revalidates as %s, %v", tool, canon, again, err)
		}
	})
}

// TestIntegerTooLarge: an integer beyond Go's int used to pass the schema
// and fail to decode in the guest ("cannot unmarshal number 1e+300 into Go
// struct field"); it is now refused here, naming the field. The bound is
// the host's int (2^63-1, or 2^31-1 on a 32-bit host such as linux/386).
func TestIntegerTooLarge(t *testing.T) {
	cat, err := toolspec.New()
	if err != nil {
		t.Fatal(err)
	}
	most := strconv.Itoa(math.MaxInt)
	over := strconv.FormatUint(uint64(math.MaxInt)+1, 10)
	below := "2147483647" // the largest int everywhere
	if math.MaxInt > math.MaxInt32 {
		below = "9223372036854774784" // the largest float64 under 2^63
	}
	for args, want := range map[string]string{
		`{"path":"a","offset":1e300}`:               "offset is too large: 1e300 (at most " + most + ")",
		`{"path":"a","limit":` + over + `}`:         "limit is too large: " + over + " (at most " + most + ")",
		`{"path":"a","limit":` + below + `}`:        "",
		`{"path":"a","offset":1,"limit":100000000}`: "",
	} {
		_, _, err := cat.Validate(proto.ReadFile, []byte(args))
		if got := fmtErr(err); got != want {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
	// What passes decodes into the argument struct on this host.
	_, canon, err := cat.Validate(proto.ReadFile, []byte(`{"path":"a","limit":`+below+`}`))
	if err != nil {
		t.Fatal(err)
	}
	var a proto.ReadFileArgs
	want, _ := strconv.ParseFloat(below, 64)
	if err := json.Unmarshal(canon, &a); err != nil || float64(a.Limit) != want {
		t.Errorf("%s decodes as limit %d, %v", canon, a.Limit, err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
