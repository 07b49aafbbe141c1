// Package limits is the one set of options that change what the tools
// answer: the guest's limits and the deny- and allow-lists. Each is a
// field of [Options], whose tags say everything the rest of moat needs:
//
//   - json: its name in a recording's session (host/recording embeds
//     Options, so a replay reads the same values back);
//   - flag: its command-line flag (cmd/moat registers every field from
//     the tags, and its MOAT_* variable is the flag's name, upper-cased,
//     "-" as "_": --no-ignore is MOAT_NO_IGNORE);
//   - help: the flag's help line;
//   - check: "positive" for a number that must be above zero.
//
// Adding a limit is one field here (and, if the guest reads it, its place
// in [Options.Guest]).
package limits

import "github.com/moatdev/moat/guest/proto"

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
}

// Defaults are the options of a command line that sets none of them.
func Defaults() Options {
	return Options{MaxReadBytes: proto.DefaultMaxReadBytes, MaxResults: proto.DefaultMaxResults}
}

// Guest is the part of the options the guest applies to each call.
func (o Options) Guest() proto.Limits {
	return proto.Limits{MaxReadBytes: o.MaxReadBytes, MaxResults: o.MaxResults, NoIgnore: o.NoIgnore}
}
