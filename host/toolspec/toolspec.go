// Package toolspec is the catalogue of moat's tools, built from the rows of
// guest/proto's registry (proto.Registry). Name, description and JSON Schema
// (derived from the registry's argument structs) for every model-facing
// protocol; the title and hints MCP clients show; how an activity line
// summarises a call; the usage `moat tool` prints; and the validation that
// every call passes before anything touches the disk.
//
// Ollama's native API, the OpenAI-compatible API and MCP are all fed from
// [Catalog]; `moat tool` validates through [Catalog.Validate] exactly as the
// agent loop does, so a call behaves the same whichever way it arrives.
//
// Adding a tool touches guest/proto (its argument struct and its row in
// proto.Registry) and guest/tools (its handler), and nothing here;
// TestToolTable checks that they agree.
package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/policy"
)

// Tool describes one tool.
type Tool struct {
	Name string
	// Title is the human-readable name clients show ("Read file").
	Title string
	// Description tells the model what the tool does.
	Description string
	// Roots is how it names a file when the workspace has several roots
	// (proto.ToolDef.Roots); the engine adds it to Description then.
	Roots  string
	Schema *jsonschema.Schema
	// Usage is the tool's name and arguments as `moat tool` help lists
	// them, derived from the argument struct: "read_file {path, offset?,
	// limit?}", "?" marking an optional argument.
	Usage string
	// Write marks propose_write and propose_edit: they go to the approval
	// gate, never to the guest, and are offered only when writes can be
	// approved.
	Write bool
	// ReadOnly and Destructive are the hints MCP clients use to decide what
	// needs confirmation: a read-only tool changes nothing (and so calling
	// it twice is calling it once); a destructive one may lose data (a
	// replaced file's old content).
	ReadOnly, Destructive bool
	// Summary is how the activity line shows a call.
	Summary Summary
	// PathFields are the argument names that hold sandbox paths; each is
	// checked lexically by Validate.
	PathFields []string
	// Volatile are the lines of its answers that the same tree, copied
	// elsewhere or checked out afresh, answers differently (stat's
	// modified: line); a replay compares them by this declaration.
	Volatile []Volatile

	resolved *jsonschema.Resolved
	props    map[string]*jsonschema.Resolved
}

// Result is what a call returns to the model.
type Result struct {
	Text    string
	IsError bool
	// Written is set by the approval gate when the proposal was approved
	// and written to disk, so callers count writes without reading Text.
	Written bool
}

// Errorf builds an error result; the text always starts with "error: " so a
// model (and a script) can tell failure from content at a glance.
func Errorf(format string, args ...any) Result {
	return Result{Text: "error: " + fmt.Sprintf(format, args...), IsError: true}
}

// Catalog is the set of tools. Build it once with [New]; it is read-only and
// safe for concurrent use.
type Catalog struct {
	tools  []*Tool
	byName map[string]*Tool
}

// Summary says which arguments an activity line shows for a call
// (proto.Summary: a tool's is declared in its registry row).
type Summary = proto.Summary

// Volatile is one line of a tool's answer whose value is not the tree's
// content but where and when the tree is (proto.Volatile: a tool's are
// declared in its registry row).
type Volatile = proto.Volatile

// defs is the tool table, in the order tools are offered: the rows of
// proto's registry that a model can call.
func defs() []proto.ToolDef {
	var out []proto.ToolDef
	for _, d := range proto.Registry() {
		if !d.Is(proto.Internal) {
			out = append(out, d)
		}
	}
	return out
}

// PathFieldsOf are the named tool's arguments that hold sandbox paths,
// offered or not; nil for a tool that does not exist. It needs no
// [Catalog].
func PathFieldsOf(name string) []string {
	for _, d := range defs() {
		if d.Name == name {
			return d.PathFields
		}
	}
	return nil
}

// VolatileOf are the volatile lines of the named tool's answers (see
// [Volatile]); nil for a tool whose answers have none. It needs no
// [Catalog].
func VolatileOf(name string) []Volatile {
	for _, d := range defs() {
		if d.Name == name {
			return d.Volatile
		}
	}
	return nil
}

// SummaryOf is how the activity line shows a call of the named tool, offered
// or not (a model may call a write proposal that was not offered); ok is
// false for a tool that does not exist. It needs no [Catalog].
func SummaryOf(name string) (s Summary, ok bool) {
	for _, d := range defs() {
		if d.Name == name {
			return d.Summary, true
		}
	}
	return Summary{}, false
}

// usage is a tool's name and arguments, in the argument struct's order,
// "?" marking those the schema does not require (omitempty).
func usage(d proto.ToolDef) string {
	var args []string
	typ := argType(d)
	for _, f := range reflect.VisibleFields(typ) {
		tag, ok := f.Tag.Lookup("json")
		if f.Anonymous || !ok || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",omitempty,") {
			name += "?"
		}
		args = append(args, name)
	}
	return d.Name + " {" + strings.Join(args, ", ") + "}"
}

// argType is the tool's argument struct.
func argType(d proto.ToolDef) reflect.Type { return reflect.TypeOf(d.NewArgs()).Elem() }

// Help lists every tool's usage for `moat tool` help, one a line, each
// indented by two spaces. It needs no [Catalog]: printing help derives no
// schema.
func Help() string {
	var b strings.Builder
	var writes []string
	for _, d := range defs() {
		fmt.Fprintf(&b, "  %s\n", usage(d))
		if d.Is(proto.Writes) {
			writes = append(writes, d.Name)
		}
	}
	if len(writes) > 0 {
		fmt.Fprintf(&b, "  (%s show a diff on the terminal and write only after you type y)\n", strings.Join(writes, " and "))
	}
	return b.String()
}

// New derives every tool's schema from its argument struct.
func New() (*Catalog, error) {
	c := &Catalog{byName: map[string]*Tool{}}
	for _, d := range defs() {
		s, err := jsonschema.ForType(argType(d), &jsonschema.ForOptions{})
		if err != nil {
			return nil, fmt.Errorf("toolspec: schema for %s: %w", d.Name, err)
		}
		for name, p := range s.Properties {
			if len(p.Types) == 2 && p.Types[0] == "null" {
				// A slice field (propose_edit's edits) is derived as
				// nullable; one plain type is what every server and model
				// reads, and an absent list is left out, not null.
				p.Type, p.Types = p.Types[1], nil
			}
			if p.Type == "integer" {
				p.Minimum = jsonschema.Ptr(0.0)
			}
			if name == "offset" {
				p.Minimum = jsonschema.Ptr(1.0)
			}
			maximum, enum := proto.Bounds(d.Name, name)
			switch {
			case maximum > 0 && p.Type == "array":
				p.MaxItems = jsonschema.Ptr(maximum)
			case maximum > 0:
				p.Maximum = jsonschema.Ptr(float64(maximum))
			}
			for _, v := range enum {
				p.Enum = append(p.Enum, v)
			}
		}
		t := &Tool{Name: d.Name, Title: d.Title, Description: d.Description, Roots: d.Roots, Schema: s, Usage: usage(d),
			Write: d.Is(proto.Writes), ReadOnly: !d.Is(proto.Writes), Destructive: d.Is(proto.Writes), // replacing a file's content loses the old one
			Summary: d.Summary, PathFields: d.PathFields, Volatile: d.Volatile, props: map[string]*jsonschema.Resolved{}}
		if t.resolved, err = s.Resolve(nil); err != nil {
			return nil, fmt.Errorf("toolspec: resolve %s: %w", d.Name, err)
		}
		for name, p := range s.Properties {
			if t.props[name], err = p.Resolve(nil); err != nil {
				return nil, fmt.Errorf("toolspec: resolve %s.%s: %w", d.Name, name, err)
			}
		}
		c.tools = append(c.tools, t)
		c.byName[t.Name] = t
	}
	return c, nil
}

// Tools lists the tools in a stable order; writes=false leaves out the
// write proposals.
func (c *Catalog) Tools(writes bool) []*Tool {
	var out []*Tool
	for _, t := range c.tools {
		if t.Write && !writes {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Lookup finds a tool by name.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Names lists every tool name, for error messages.
func (c *Catalog) Names(writes bool) []string {
	var n []string
	for _, t := range c.Tools(writes) {
		n = append(n, t.Name)
	}
	return n
}

// ErrInvalid marks an argument error; its text is what the model is told.
var ErrInvalid = errors.New("invalid tool call")

// CallError is a refused call. Its message is written for the model.
type CallError struct{ Msg string }

func (e *CallError) Error() string   { return e.Msg }
func (e *CallError) Is(t error) bool { return t == ErrInvalid }

func invalid(format string, args ...any) error {
	return &CallError{Msg: fmt.Sprintf(format, args...)}
}

// Validate checks a call's raw JSON arguments against the tool's schema and
// lexically checks its paths, before anything touches the disk. Empty input
// means "{}". It returns the arguments re-encoded canonically.
//
// Messages name the field and the problem in words a model can act on:
// "path must be a string, got number". Type, range and shape checks are the
// JSON Schema library's; the wording is ours.
func (c *Catalog) Validate(name string, raw json.RawMessage) (*Tool, json.RawMessage, error) {
	t, ok := c.byName[name]
	if !ok {
		return nil, nil, invalid("unknown tool: %q (available: %s)", name, strings.Join(c.Names(true), ", "))
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		if raw[0] != '{' {
			return nil, nil, invalid("%s arguments must be a JSON object, got %s", name, jsonKind(raw))
		}
		return nil, nil, invalid("%s arguments are not valid JSON: %v", name, err)
	}
	if dec.More() {
		return nil, nil, invalid("%s arguments have trailing data after the JSON object", name)
	}
	if obj == nil {
		return nil, nil, invalid("%s arguments must be a JSON object", name)
	}
	var unknown []string
	for k := range obj {
		if _, ok := t.Schema.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, nil, invalid("%s does not take %s (it takes: %s)", name, quoteList(unknown), strings.Join(propNames(t), ", "))
	}
	for _, req := range t.Schema.Required {
		if _, ok := obj[req]; !ok {
			return nil, nil, invalid("%s needs %q (a %s)", name, req, t.Schema.Properties[req].Type)
		}
	}
	// Re-decode without UseNumber so the library sees float64 numbers.
	var plain map[string]any
	if err := json.Unmarshal(raw, &plain); err != nil {
		// The syntax was checked above: what fails now is a number no
		// float64 holds (1e400), which is valid JSON.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, nil, invalid("%s arguments hold a number out of range (%s); no argument takes one that large", name, te.Value)
		}
		return nil, nil, invalid("%s arguments are not valid JSON: %v", name, err)
	}
	// The whole object, as the schema states it; only when it fails is
	// each argument validated alone, for a message that names the first
	// wrong one (an object that passes has every argument valid).
	if err := t.resolved.Validate(plain); err != nil {
		for _, k := range sortedKeys(plain) {
			if err := t.props[k].Validate(plain[k]); err != nil {
				return nil, nil, invalid("%s", fieldMessage(k, t.Schema.Properties[k], plain[k], obj[k]))
			}
		}
		return nil, nil, invalid("%s arguments do not match its schema: %v", name, err)
	}
	// JSON Schema's "integer" has no upper bound, but the argument structs
	// hold Go ints: a bigger number passed the schema and then failed to
	// decode in the guest. The host decodes them too (grep's merge in
	// host/fanout), so the bound is the host's int, which is never wider
	// than the wasm guest's 64 bits. float64 >= -MinInt (2^63, or 2^31 on a
	// 32-bit host, both exact) is exactly what does not fit.
	for _, k := range sortedKeys(plain) {
		if f, ok := plain[k].(float64); ok && t.Schema.Properties[k].Type == "integer" && f >= -float64(math.MinInt) {
			return nil, nil, invalid("%s is too large: %v (at most %d)", k, obj[k], math.MaxInt)
		}
	}
	for _, f := range t.PathFields {
		if v, ok := plain[f].(string); ok {
			if _, err := policy.Clean(v); err != nil {
				return nil, nil, invalid("%v", err)
			}
		}
	}
	canon, _ := json.Marshal(plain)
	return t, canon, nil
}

// fieldMessage says what is wrong with argument k, whose value is v as
// decoded into float64s and given as the model wrote it (a json.Number for
// a number: 2^63 reads back in full, not rounded).
func fieldMessage(k string, s *jsonschema.Schema, v, given any) string {
	num := func(f float64) string {
		if n, ok := given.(json.Number); ok {
			return n.String()
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	got := kindOf(v)
	if s.Type != "" && got != s.Type && !(s.Type == "number" && got == "integer") {
		return fmt.Sprintf("%s must be %s %s, got %s", k, article(s.Type), s.Type, describe(v))
	}
	if l, ok := v.([]any); ok && s.MaxItems != nil && len(l) > *s.MaxItems {
		return fmt.Sprintf("%s may hold at most %d items, got %d", k, *s.MaxItems, len(l))
	}
	if msg, ok := itemMessage(k, s, v); ok {
		return msg
	}
	if s.Minimum != nil {
		if f, ok := v.(float64); ok && f < *s.Minimum {
			return fmt.Sprintf("%s must be at least %g, got %s", k, *s.Minimum, num(f))
		}
	}
	if s.Maximum != nil {
		if f, ok := v.(float64); ok && f > *s.Maximum {
			return fmt.Sprintf("%s must be at most %g, got %s", k, *s.Maximum, num(f))
		}
	}
	if len(s.Enum) > 0 {
		var names []string
		for _, e := range s.Enum {
			names = append(names, fmt.Sprintf("%q", e))
		}
		return fmt.Sprintf("%s must be one of %s, got %s", k, strings.Join(names, ", "), describe(v))
	}
	return fmt.Sprintf("%s has an invalid value: %s", k, describe(v))
}

// itemMessage says what is wrong with the first bad element of a list of
// objects (propose_edit's edits), in the words Validate uses for the
// arguments themselves: "edits[1] needs \"new_text\" (a string)".
func itemMessage(k string, s *jsonschema.Schema, v any) (string, bool) {
	list, ok := v.([]any)
	if !ok || s.Items == nil || s.Items.Type != "object" {
		return "", false
	}
	is := s.Items
	for i, it := range list {
		at := fmt.Sprintf("%s[%d]", k, i)
		obj, ok := it.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s must be an object, got %s", at, describe(it)), true
		}
		for _, f := range sortedKeys(obj) {
			if _, known := is.Properties[f]; !known {
				names := make([]string, 0, len(is.Properties))
				for n := range is.Properties {
					names = append(names, n)
				}
				sort.Strings(names)
				return fmt.Sprintf("%s does not take %q (it takes: %s)", at, f, strings.Join(names, ", ")), true
			}
		}
		for _, req := range is.Required {
			if _, has := obj[req]; !has {
				return fmt.Sprintf("%s needs %q (a %s)", at, req, is.Properties[req].Type), true
			}
		}
		for _, f := range sortedKeys(obj) {
			if ps := is.Properties[f]; ps.Type != "" && kindOf(obj[f]) != ps.Type {
				return fieldMessage(at+"."+f, ps, obj[f], obj[f]), true
			}
		}
	}
	return "", false
}

func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		// Trunc, not a round trip through int64: 2^63 and beyond are
		// whole numbers too, and must be called integers (then refused
		// as too large), not "a number".
		if !math.IsInf(x, 0) && x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func describe(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	k := kindOf(v)
	if k == "null" {
		return "null"
	}
	return fmt.Sprintf("%s %s", article(k), k) + " (" + s + ")"
}

func article(k string) string {
	if strings.IndexByte("aeiou", k[0]) >= 0 {
		return "an"
	}
	return "a"
}

func jsonKind(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "malformed JSON"
	}
	return describe(v)
}

func propNames(t *Tool) []string {
	var n []string
	for k := range t.Schema.Properties {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func sortedKeys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
