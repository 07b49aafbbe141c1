// Package toolspec is the catalogue of moat's tools as every model-facing
// protocol sees them: name, description and JSON Schema, all derived from
// the argument structs in guest/proto, and the validation that every call
// passes before anything touches the disk.
//
// Ollama's native API, the OpenAI-compatible API and MCP are all fed from
// [Catalog]; `moat tool` validates through [Catalog.Validate] exactly as the
// agent loop does, so a call behaves the same whichever way it arrives.
package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/policy"
)

// Tool describes one tool.
type Tool struct {
	Name        string
	Description string
	Schema      *jsonschema.Schema
	// Write marks propose_write and propose_edit: they go to the approval
	// gate, never to the guest, and are offered only when writes can be
	// approved.
	Write bool
	// PathFields are the argument names that hold sandbox paths; each is
	// checked lexically by Validate.
	PathFields []string

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

type def struct {
	name, desc string
	args       any
	write      bool
	paths      []string
}

func defs() []def {
	return []def{
		{proto.ListDir, "List the entries of a folder in the workspace, sorted; folders end with \"/\", symlinks show their target.",
			proto.ListDirArgs{}, false, []string{"path"}},
		{proto.ReadFile, "Read a text file in the workspace. Large files come in pages: use offset and limit (in lines) to read on. Binary files are refused.",
			proto.ReadFileArgs{}, false, []string{"path"}},
		{proto.Grep, "Search file contents in the workspace with an RE2 regular expression; prints path:line: text per match. Skips binary and .gitignored files.",
			proto.GrepArgs{}, false, []string{"path"}},
		{proto.Glob, "Find files and folders in the workspace whose paths match a glob pattern (** matches any depth).",
			proto.GlobArgs{}, false, []string{"path"}},
		{proto.Stat, "Describe a file or folder in the workspace: kind, size, mode, modification time, symlink target.",
			proto.StatArgs{}, false, []string{"path"}},
		{proto.ProposeWrite, "Propose creating or replacing a file in the workspace. A person sees the diff and must approve it; you are told whether it was written.",
			proto.ProposeWriteArgs{}, true, []string{"path"}},
		{proto.ProposeEdit, "Propose replacing exact text in a workspace file. old_text must match exactly once unless replace_all is true. A person must approve the change.",
			proto.ProposeEditArgs{}, true, []string{"path"}},
	}
}

// New derives every tool's schema from its argument struct.
func New() (*Catalog, error) {
	c := &Catalog{byName: map[string]*Tool{}}
	for _, d := range defs() {
		s, err := jsonschema.ForType(reflect.TypeOf(d.args), &jsonschema.ForOptions{})
		if err != nil {
			return nil, fmt.Errorf("toolspec: schema for %s: %w", d.name, err)
		}
		for name, p := range s.Properties {
			if p.Type == "integer" {
				p.Minimum = jsonschema.Ptr(0.0)
			}
			if name == "offset" {
				p.Minimum = jsonschema.Ptr(1.0)
			}
		}
		t := &Tool{Name: d.name, Description: d.desc, Schema: s, Write: d.write, PathFields: d.paths,
			props: map[string]*jsonschema.Resolved{}}
		if t.resolved, err = s.Resolve(nil); err != nil {
			return nil, fmt.Errorf("toolspec: resolve %s: %w", d.name, err)
		}
		for name, p := range s.Properties {
			if t.props[name], err = p.Resolve(nil); err != nil {
				return nil, fmt.Errorf("toolspec: resolve %s.%s: %w", d.name, name, err)
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
		return nil, nil, invalid("%s arguments are not valid JSON: %v", name, err)
	}
	for _, k := range sortedKeys(plain) {
		if err := t.props[k].Validate(plain[k]); err != nil {
			return nil, nil, invalid("%s", fieldMessage(k, t.Schema.Properties[k], plain[k]))
		}
	}
	if err := t.resolved.Validate(plain); err != nil { // the whole object, as the schema states it
		return nil, nil, invalid("%s arguments do not match its schema: %v", name, err)
	}
	// JSON Schema's "integer" has no upper bound, but the argument structs
	// hold Go ints (64-bit in the wasm guest too): a bigger number passed the
	// schema and then failed to decode in the guest. float64 >= 2^63 is
	// exactly what does not fit.
	for _, k := range sortedKeys(plain) {
		if f, ok := plain[k].(float64); ok && t.Schema.Properties[k].Type == "integer" && f >= 1<<63 {
			return nil, nil, invalid("%s is too large: %v (at most %d)", k, obj[k], math.MaxInt64)
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

func fieldMessage(k string, s *jsonschema.Schema, v any) string {
	got := kindOf(v)
	if s.Type != "" && got != s.Type && !(s.Type == "number" && got == "integer") {
		return fmt.Sprintf("%s must be %s %s, got %s", k, article(s.Type), s.Type, describe(v))
	}
	if s.Minimum != nil {
		if f, ok := v.(float64); ok && f < *s.Minimum {
			return fmt.Sprintf("%s must be at least %g, got %g", k, *s.Minimum, f)
		}
	}
	return fmt.Sprintf("%s has an invalid value: %s", k, describe(v))
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
		if x == float64(int64(x)) {
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
