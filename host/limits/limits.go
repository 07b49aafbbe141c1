// Package limits is the one set of options that say how tightly a
// session's tools are held and what they answer: the guest's limits, the
// deny- and allow-lists, the redaction of secrets, the per-call deadline,
// the path resolver and the OS isolation. Each is a field of [Options],
// whose tags say everything the rest of moat needs:
//
//   - json: its name in a recording's session (host/recording embeds
//     Options, so a replay reads the same values back); "-" for an
//     option that changes how a call is held, not what it answers, which
//     a recording does not keep and moat replay takes from its own
//     command line ([Replayed]);
//   - flag: its command-line flag (cmd/moat registers every field from
//     the tags, and its MOAT_* variable is the flag's name, upper-cased,
//     "-" as "_": --no-ignore is MOAT_NO_IGNORE);
//   - help: the flag's help line;
//   - check: "positive" for a number that must be above zero; "resolver"
//     and "isolate" for the words confine.ParseKind and isolate.ParseMode
//     take;
//   - negate: the flag is the field's opposite (--redact sets NoRedact
//     false), so that the zero value, and a recording without the
//     member, is the default.
//
// Adding a limit is one field here (and, if the guest reads it, its place
// in [Options.Guest]).
package limits

import (
	"reflect"
	"time"

	"github.com/moatdev/moat/guest/proto"
)

// Options are the limits and lists of one session. The field order is the
// order of a recording's session JSON and of its comment's flags.
type Options struct {
	MaxReadBytes int64 `json:"max_read_bytes" flag:"max-read-bytes" check:"positive" help:"most bytes read_file returns in one call; larger files are paged"`
	MaxResults   int   `json:"max_results" flag:"max-results" check:"positive" help:"most grep hits or glob matches in one call"`
	NoIgnore     bool  `json:"no_ignore,omitempty" flag:"no-ignore" help:"let grep and glob see files that .gitignore excludes"`
	// A help text naming its value (flag.UnquoteUsage's back quotes)
	// needs a tag in double quotes.
	Deny  []string "json:\"deny,omitempty\" flag:\"deny\" help:\"also deny paths matching this `glob` (repeatable, or a comma-separated list; a name without / matches at any depth)\""
	Allow []string "json:\"allow,omitempty\" flag:\"allow\" help:\"allow paths matching this `glob` even if the deny-list matches (repeatable, or a comma-separated list), e.g. .env.example\""
	// NoRedact shows the tools the files as they are (--redact=false); a
	// recording made so replays so.
	NoRedact bool `json:"no_redact,omitempty" flag:"redact" negate:"true" help:"replace secrets (private keys, cloud keys, tokens: gitleaks' rules; passwords and keys in configuration files) with [redacted: RULE] in every file the tools read, so in everything they return, in recordings and in the write diff; --allow does not turn this off, --redact=false does"`

	// How a call is held, not what it answers: not recorded.
	Resolver string        `json:"-" flag:"resolver" check:"resolver" help:"how paths are confined to the root: auto, openat2 (Linux RESOLVE_BENEATH) or root (Go os.Root)"`
	Isolate  string        `json:"-" flag:"isolate" check:"isolate" help:"OS isolation of the tool process: auto (where the kernel allows), require, or off"`
	Timeout  time.Duration `json:"-" flag:"timeout" check:"positive" help:"deadline for one tool call"`
}

// Defaults are the options of a command line that sets none of them.
func Defaults() Options {
	return Options{
		MaxReadBytes: proto.DefaultMaxReadBytes, MaxResults: proto.DefaultMaxResults,
		Resolver: "auto", Isolate: "auto", Timeout: 30 * time.Second,
	}
}

// Guest is the part of the options the guest applies to each call.
func (o Options) Guest() proto.Limits {
	return proto.Limits{MaxReadBytes: o.MaxReadBytes, MaxResults: o.MaxResults, NoIgnore: o.NoIgnore}
}

// Recorded reports whether a recording keeps the field (its json tag is
// not "-").
func Recorded(f reflect.StructField) bool { return f.Tag.Get("json") != "-" }

// Replayed are the options a replay runs with: the recording's, and
// where a recording keeps none (the fields [Recorded] is false for) the
// replaying command line's.
func Replayed(recorded, run Options) Options {
	rv, runv := reflect.ValueOf(&recorded).Elem(), reflect.ValueOf(run)
	for i, f := range reflect.VisibleFields(rv.Type()) {
		if !Recorded(f) {
			rv.Field(i).Set(runv.Field(i))
		}
	}
	return recorded
}
