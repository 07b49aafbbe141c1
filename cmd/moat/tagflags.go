package main

import (
	"flag"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Flags declared from a struct's tags (host/limits.Options): a field
// with a flag tag is a flag of that name, its help the help tag, its
// default the field's value when registered; check:"positive" refuses a
// number that is not above zero, where it was given.

// registerTagged declares a flag on fs for every field of the struct v
// points to that has a flag tag.
func registerTagged(fs *flag.FlagSet, v any) {
	eachTagged(v, func(f reflect.StructField, p any) {
		name, help := f.Tag.Get("flag"), f.Tag.Get("help")
		switch p := p.(type) {
		case *int64:
			fs.Int64Var(p, name, *p, help)
		case *int:
			fs.IntVar(p, name, *p, help)
		case *bool:
			fs.BoolVar(p, name, *p, help)
		case *time.Duration:
			fs.DurationVar(p, name, *p, help)
		case *string:
			fs.StringVar(p, name, *p, help)
		case *[]string:
			fs.Var((*stringList)(p), name, help)
		default:
			panic(fmt.Sprintf("registerTagged: --%s has a field of type %T", name, p))
		}
		if f.Tag.Get("check") == "positive" {
			switch p := p.(type) {
			case *int64:
				validate(fs, name, positive(p))
			case *int:
				validate(fs, name, positive(p))
			case *time.Duration:
				validate(fs, name, positive(p))
			}
		}
	})
}

// taggedWords are the flags of the struct v points to as a command line
// would give them, in field order: with valued, those that take a value
// ("--max-results 100"), always; without, the switches ("--no-ignore")
// that are on and each item of the lists ("--deny *.pem").
func taggedWords(v any, valued bool) []string {
	var out []string
	eachTagged(v, func(f reflect.StructField, p any) {
		name := "--" + f.Tag.Get("flag")
		switch p := p.(type) {
		case *bool:
			if !valued && *p {
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
