package proto

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The guest's side of the wire, without encoding/json.
//
// encoding/json works by reflection: it, fmt and the reflection they need
// were a fifth of the guest's code. wazero decodes and validates all of that
// code every time a process loads the guest (it is most of what a one-shot
// `moat tool` call waits for) and compiles it on the first run. So the guest
// reads requests and arguments and writes responses with the small codec
// below; the host keeps encoding/json. The two must agree on every input:
// TestWireMatchesEncodingJSON and FuzzWire hold this codec to
// encoding/json's results, and TestArgFields to the structs' json tags.
// The structs' fields are generated from those tags (wire_fields.go).

//go:generate go run wiregen.go

// DecodeRequest decodes one request line.
func DecodeRequest(line []byte) (Request, error) {
	var r Request
	d := &decoder{b: line}
	err := d.object(func(key string) error {
		switch {
		case keyIs(key, "id"):
			return d.uint(&r.ID)
		case keyIs(key, "tool"):
			return d.str(&r.Tool)
		case keyIs(key, "args"):
			raw, err := d.raw()
			if err == nil {
				r.Args = append(r.Args[:0], raw...)
			}
			return err
		case keyIs(key, "limits"):
			return d.fields(r.Limits.fields())
		}
		_, err := d.raw()
		return err
	})
	if err == nil {
		err = d.end()
	}
	return r, err
}

// DecodeArgs decodes a tool's arguments into v, which must point to the
// argument struct of a tool the guest runs. Absent arguments ("" or null)
// leave v as it is. The write proposals' arguments never reach the guest, so
// they have no wire fields here.
func DecodeArgs(raw []byte, v any) error {
	a, ok := v.(wireArgs)
	if !ok {
		return errors.New("proto: DecodeArgs of an unknown type")
	}
	fs := a.fields()
	d := &decoder{b: raw}
	if d.peek() == 0 && d.i == len(raw) {
		return nil // nothing but space
	}
	if err := d.fields(fs); err != nil {
		return err
	}
	return d.end()
}

// wireArgs is an argument struct the guest decodes: its members, each
// with the field it goes to. wiregen.go writes every struct's from its
// json tags (wire_fields.go), and TestArgFields holds them to the tags.
type wireArgs interface{ fields() []field }

// field is one member of a JSON object and where its value goes: exactly
// one of the pointers is set.
type field struct {
	name string
	s    *string
	i    *int
	i64  *int64
	b    *bool
	fws  *[]FolderWeight
	set  *bool // when not nil, set true if the member is present
}

// keyIs matches a member name as encoding/json does: exactly, or else
// case-insensitively.
func keyIs(key, name string) bool { return key == name || strings.EqualFold(key, name) }

// decoder reads JSON values from b.
type decoder struct {
	b []byte
	i int
}

func (d *decoder) errorf(what string) error {
	if d.peek() == 0 && d.i >= len(d.b) {
		return errors.New("unexpected end of JSON input")
	}
	return errors.New(what)
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// end checks that nothing but space follows the value.
func (d *decoder) end() error {
	if d.peek() != 0 || d.i < len(d.b) {
		return d.errorf("unexpected data after the value")
	}
	return nil
}

// literal consumes word (true, false, null) if it is next.
func (d *decoder) literal(word string) bool {
	if d.peek() == word[0] && len(d.b)-d.i >= len(word) && string(d.b[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	return false
}

// object calls member for each member's name, with the decoder at its value;
// member must consume the value. A null object has no members.
func (d *decoder) object(member func(key string) error) error {
	if d.literal("null") {
		return nil
	}
	if d.peek() != '{' {
		return d.errorf("want an object")
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		var key string
		if d.peek() != '"' {
			return d.errorf("want a member name")
		}
		if err := d.str(&key); err != nil {
			return err
		}
		if d.peek() != ':' {
			return d.errorf("want ':'")
		}
		d.i++
		if err := member(key); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.errorf("want ',' or '}'")
		}
	}
}

// fields decodes an object into fs; members not in fs are skipped.
func (d *decoder) fields(fs []field) error {
	return d.object(func(key string) error {
		f := lookup(fs, key)
		if f == nil {
			_, err := d.raw()
			return err
		}
		if err := d.field(f); err != nil {
			return errors.New(f.name + ": " + err.Error())
		}
		if f.set != nil {
			*f.set = true
		}
		return nil
	})
}

// field decodes the value that is next into f.
func (d *decoder) field(f *field) error {
	switch {
	case f.s != nil:
		return d.str(f.s)
	case f.b != nil:
		return d.boolean(f.b)
	case f.fws != nil:
		return d.weights(f.fws)
	case f.i != nil:
		var v int64
		err := d.integer(&v, strconv.IntSize)
		if err == nil {
			*f.i = int(v)
		}
		return err
	default:
		return d.integer(f.i64, 64)
	}
}

// weights decodes an array of objects as encoding/json does into a
// []FolderWeight: null makes it nil, [] empty, a null element leaves its
// element as it was; and, as encoding/json does, an array decoded over
// one before decodes into its elements without clearing them.
func (d *decoder) weights(v *[]FolderWeight) error {
	if d.literal("null") {
		*v = nil
		return nil
	}
	if d.peek() != '[' {
		return d.errorf("want an array")
	}
	d.i++
	out := (*v)[:0]
	if out == nil {
		out = []FolderWeight{}
	}
	if d.peek() == ']' {
		d.i++
		*v = out
		return nil
	}
	for {
		if len(out) < cap(out) {
			out = out[:len(out)+1]
		} else {
			out = append(out, FolderWeight{})
		}
		if err := d.fields(out[len(out)-1].fields()); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			*v = out
			return nil
		default:
			return d.errorf("want ',' or ']'")
		}
	}
}

func lookup(fs []field, key string) *field {
	for i := range fs {
		if fs[i].name == key {
			return &fs[i]
		}
	}
	for i := range fs {
		if strings.EqualFold(fs[i].name, key) {
			return &fs[i]
		}
	}
	return nil
}

func (d *decoder) boolean(v *bool) error {
	switch {
	case d.literal("true"):
		*v = true
	case d.literal("false"):
		*v = false
	case d.literal("null"):
	default:
		return d.errorf("want true or false")
	}
	return nil
}

// number returns the text of the number that is next.
func (d *decoder) number() (string, error) {
	d.ws()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if n := digits(); n == 0 || n > 1 && d.b[d.i-n] == '0' {
		return "", d.errorf("want a number")
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return "", d.errorf("want digits after '.'")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return "", d.errorf("want digits in the exponent")
		}
	}
	return string(d.b[start:d.i]), nil
}

// integer decodes a number that must be a whole number fitting bits bits.
func (d *decoder) integer(v *int64, bits int) error {
	if d.literal("null") {
		return nil
	}
	s, err := d.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return d.errorf("want an integer, got " + s)
	}
	*v = n
	return nil
}

func (d *decoder) uint(v *uint64) error {
	if d.literal("null") {
		return nil
	}
	s, err := d.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return d.errorf("want an unsigned integer, got " + s)
	}
	*v = n
	return nil
}

// str decodes a string, turning invalid UTF-8 and lone surrogates into
// U+FFFD as encoding/json does.
func (d *decoder) str(v *string) error {
	if d.literal("null") {
		return nil
	}
	if d.peek() != '"' {
		return d.errorf("want a string")
	}
	d.i++
	var out []byte
	start := d.i
	for {
		if d.i >= len(d.b) {
			return d.errorf("unterminated string")
		}
		c := d.b[d.i]
		switch {
		case c == '"':
			if out == nil {
				*v = validUTF8(string(d.b[start:d.i]))
			} else {
				*v = validUTF8(string(append(out, d.b[start:d.i]...)))
			}
			d.i++
			return nil
		case c < 0x20:
			return d.errorf("control character in a string")
		case c == '\\':
			out = append(out, d.b[start:d.i]...)
			d.i++
			if d.i >= len(d.b) {
				return d.errorf("unterminated string")
			}
			e := d.b[d.i]
			d.i++
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return d.errorf("bad \\u escape")
				}
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if save := d.i; d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
						d.i += 2
						if lo, ok := d.hex4(); ok {
							if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
								r2 = dec
							} else {
								d.i = save // not a pair: the next escape stands alone
							}
						} else {
							return d.errorf("bad \\u escape")
						}
					}
					r = r2
				}
				out = utf8.AppendRune(out, r)
			default:
				return d.errorf("bad escape")
			}
			start = d.i
		default:
			d.i++
		}
	}
}

func (d *decoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

// raw skips one value of any kind and returns its bytes.
func (d *decoder) raw() ([]byte, error) {
	d.ws()
	start := d.i
	switch c := d.peek(); {
	case c == '{':
		if err := d.object(func(string) error { _, err := d.raw(); return err }); err != nil {
			return nil, err
		}
	case c == '[':
		d.i++
		if d.peek() == ']' {
			d.i++
			break
		}
		for {
			if _, err := d.raw(); err != nil {
				return nil, err
			}
			if d.peek() == ',' {
				d.i++
				continue
			}
			if d.peek() != ']' {
				return nil, d.errorf("want ',' or ']'")
			}
			d.i++
			break
		}
	case c == '"':
		var s string
		if err := d.str(&s); err != nil {
			return nil, err
		}
	case c == 't' || c == 'f':
		var b bool
		if err := d.boolean(&b); err != nil {
			return nil, err
		}
	case c == 'n':
		if !d.literal("null") {
			return nil, d.errorf("want null")
		}
	default:
		if _, err := d.number(); err != nil {
			return nil, err
		}
	}
	return d.b[start:d.i], nil
}
