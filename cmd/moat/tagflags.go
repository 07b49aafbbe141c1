package main

import (
	"flag"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/limits"
	"github.com/moatdev/moat/isolate"
)

// Flags declared from a struct's tags (host/limits.Options): a field
// with a flag tag is a flag of that name, its help the help tag, its
// default the field's value when registered; check:"positive" refuses a
// number that is not above zero, check:"resolver" and check:"isolate" a
// word their parsers do not take, where it was given; negate:"true" makes
// a bool flag the field's opposite.

// registerTagged declares a flag on fs for every field of the struct v
// points to that has a flag tag and that only (nil: every such field)
// allows.
func registerTagged(fs *flag.FlagSet, v any, only func(reflect.StructField) bool) {
	eachTagged(v, func(f reflect.StructField, p any) {
		if only != nil && !only(f) {
			return
		}
		name, help := f.Tag.Get("flag"), f.Tag.Get("help")
		switch p := p.(type) {
		case *bool:
			if f.Tag.Get("negate") == "true" {
				fs.Var(negated{p}, name, help)
			} else {
				fs.BoolVar(p, name, *p, help)
			}
		case *int64:
			fs.Int64Var(p, name, *p, help)
		case *int:
			fs.IntVar(p, name, *p, help)
		case *time.Duration:
			fs.DurationVar(p, name, *p, help)
		case *string:
			fs.StringVar(p, name, *p, help)
		case *[]string:
			fs.Var((*stringList)(p), name, help)
		default:
			panic(fmt.Sprintf("registerTagged: --%s has a field of type %T", name, p))
		}
		if check := tagCheck(f.Tag.Get("check"), p); check != nil {
			validate(fs, name, check)
		}
	})
}

// tagCheck is the check a check tag names, on the field p points to.
func tagCheck(tag string, p any) func() error {
	switch s, _ := p.(*string); tag {
	case "resolver":
		return parsedBy(s, confine.ParseKind)
	case "isolate":
		return parsedBy(s, isolate.ParseMode)
	case "positive":
		switch p := p.(type) {
		case *int64:
			return positive(p)
		case *int:
			return positive(p)
		case *time.Duration:
			return positive(p)
		}
	}
	return nil
}

// negated is a bool flag that sets the field to its opposite: --redact
// for NoRedact.
type negated struct{ p *bool }

func (n negated) String() string {
	if n.p == nil {
		return "false"
	}
	return strconv.FormatBool(!*n.p)
}

func (n negated) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*n.p = !v
	return nil
}

func (n negated) IsBoolFlag() bool { return true }

// Get is the flag's value (the field's opposite), as flag.Getter.
func (n negated) Get() any { return !*n.p }

// taggedWords are the recorded flags of the struct v points to as a
// command line would give them, in field order: with valued, those that
// take a value ("--max-results 100"), always; without, the switches
// ("--no-ignore", "--redact=false") that are not at their zero and each
// item of the lists ("--deny *.pem").
func taggedWords(v any, valued bool) []string {
	var out []string
	eachTagged(v, func(f reflect.StructField, p any) {
		if !limits.Recorded(f) {
			return
		}
		name := "--" + f.Tag.Get("flag")
		switch p := p.(type) {
		case *bool:
			switch {
			case valued || !*p:
			case f.Tag.Get("negate") == "true":
				out = append(out, name+"=false")
			default:
				out = append(out, name)
			}
		case *[]string:
			for _, s := range *p {
				if !valued {
					out = append(out, name+" "+s)
				}
			}
		default:
			if valued {
				out = append(out, fmt.Sprintf("%s %v", name, reflect.ValueOf(p).Elem().Interface()))
			}
		}
	})
	return out
}

// eachTagged calls fn with each field of the struct v points to that has
// a flag tag, and a pointer to the field.
func eachTagged(v any, fn func(f reflect.StructField, p any)) {
	rv := reflect.ValueOf(v).Elem()
	for _, f := range reflect.VisibleFields(rv.Type()) {
		if name := f.Tag.Get("flag"); name != "" && !strings.HasPrefix(name, "-") {
			fn(f, rv.FieldByIndex(f.Index).Addr().Interface())
		}
	}
}
