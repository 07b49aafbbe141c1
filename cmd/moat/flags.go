package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/assembly"
	nearest "github.com/moatdev/moat/host/suggest"
)

// How a command's flags are set, highest priority first: the command line,
// then MOAT_* environment variables, then the config file (--config or
// MOAT_CONFIG, ff's plain "key value" lines). moat applies the three itself
// rather than through ff.Parse so that every mistake names where it was
// made (the flag, the variable, or the file and line), the key, and what the
// value had to look like; ff's wrapped errors say none of that plainly, and
// the flag package stops at the first argument that is not a flag.

// keyOwners maps every flag name of every command to the commands that have
// it. One config file serves all commands: a command skips the keys that
// only other commands know, and every command rejects a key none knows.
type keyOwners map[string][]string

func ownersOf(cmds []*ffcli.Command) keyOwners {
	k := keyOwners{}
	for _, c := range cmds {
		if c.FlagSet == nil {
			continue
		}
		c.FlagSet.VisitAll(func(f *flag.Flag) { k[f.Name] = append(k[f.Name], c.Name) })
	}
	return k
}

// parseFlags sets c's flags from args, the environment and the config file,
// and returns the positional arguments. Flags may come anywhere among the
// arguments (moat ask "what is here?" --root sub); "--" ends the flags, so
// that a question may start with a dash. It returns flag.ErrHelp for -h or
// --help.
//
// sources gets, for each flag set from a variable, the variable's name, so
// that a later error about its value can name where it came from.
func parseFlags(c *ffcli.Command, args []string, getenv func(string) string, owners keyOwners, sources map[string]string) ([]string, error) {
	fset := c.FlagSet
	pos, err := parseArgs(c, args, owners)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var envErr error
	fromEnv := map[string]bool{}
	defer func() {
		for name := range fromEnv {
			sources[name] = envName(name)
		}
	}()
	fset.VisitAll(func(f *flag.Flag) {
		if envErr != nil || set[f.Name] {
			return
		}
		key := envName(f.Name)
		v := getenv(key)
		if v == "" {
			return
		}
		if isPathFlag(f) {
			v = resolvePath(v, "") // no shell expands ~ in an MCP client's env
		}
		if err := setValue(fset, f, v); err != nil {
			envErr = valueError(key, "=", v, err)
		}
		fromEnv[f.Name] = true
	})
	if envErr != nil {
		return nil, envErr
	}

	cf := fset.Lookup("config")
	if cf == nil {
		return pos, nil
	}
	file, from := cf.Value.String(), "--config"
	if fromEnv["config"] {
		from = envName("config")
	}
	if file == "" {
		// The default file is read only if it is there.
		if file, from = defaultConfig(), "the default config file"; file == "" || !exists(file) {
			return pos, nil
		}
	}
	for name := range fromEnv {
		set[name] = true
	}
	return pos, readConfig(fset, file, from, set, owners)
}

// parseArgs is the command-line step of parseFlags.
func parseArgs(c *ffcli.Command, args []string, owners keyOwners) ([]string, error) {
	fset := c.FlagSet
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "h" || name == "help" {
			return nil, flag.ErrHelp
		}
		f := fset.Lookup(name)
		if f == nil {
			return nil, unknownFlag(c, a, name, owners)
		}
		if !hasValue {
			if isBool(f) {
				value = "true"
			} else {
				if i+1 == len(args) {
					return nil, usagef("--%s needs a value\n%s", name, helpPointer(c.Name))
				}
				i++
				value = args[i]
			}
		}
		if err := setValue(fset, f, value); err != nil {
			return nil, valueError("--"+name, " ", value, err)
		}
	}
	return pos, nil
}

// unknownFlag words an unknown flag the way it is documented (--name), says
// which commands have it if any do, and points at the command's help
// instead of printing all of it.
func unknownFlag(c *ffcli.Command, arg, name string, owners keyOwners) error {
	cmd := c.Name
	msg := fmt.Sprintf("unknown flag --%s", name)
	switch {
	case strings.ContainsAny(name, " \t"):
		msg = fmt.Sprintf("unknown flag %q (to start a question with a dash, put -- before it)", arg)
	case len(owners[name]) > 0:
		msg = fmt.Sprintf("moat %s has no --%s flag (%s)", cmd, name, ownedBy(owners[name]))
	case len([]rune(name)) == 1:
		msg = fmt.Sprintf("unknown flag %s (moat has no one-letter flags%s)", arg, guessLong(c.FlagSet, name))
	}
	return usagef("%s\n%s", msg, helpPointer(cmd))
}

// guessLong names the long flags a one-letter one may stand for (-r: --root
// or --resolver), as "; did you mean ...?", or "".
func guessLong(fs *flag.FlagSet, letter string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, strings.ToLower(letter)) {
			names = append(names, "--"+f.Name)
		}
	})
	switch n := len(names); {
	case n == 0:
		return ""
	case n == 1:
		return "; did you mean " + names[0] + "?"
	default:
		return "; did you mean " + strings.Join(names[:n-1], ", ") + " or " + names[n-1] + "?"
	}
}

func helpPointer(cmd string) string {
	return fmt.Sprintf("Run 'moat help %s' for its flags.", cmd)
}

// ownedBy says which commands have a flag: "only ask and chat have it".
func ownedBy(cmds []string) string {
	n := len(cmds)
	if n == 1 {
		return "only " + cmds[0] + " has it"
	}
	return "only " + strings.Join(cmds[:n-1], ", ") + " and " + cmds[n-1] + " have it"
}

// readConfig applies the config file at path (named by from, --config or
// MOAT_CONFIG) to the flags not already set.
func readConfig(fset *flag.FlagSet, path, from string, set map[string]bool, owners keyOwners) error {
	if isDir(path) {
		return fileError(from, path, syscall.EISDIR)
	}
	f, err := os.Open(path)
	if err != nil {
		return fileError(from, path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		// One line at a time through ff's parser: its syntax, our line numbers.
		err := ff.PlainParser(strings.NewReader(keyValueLine(sc.Text())), func(key, value string) error {
			key = strings.TrimLeft(key, "-") // "--root x" reads as "root x"
			fl := fset.Lookup(key)
			switch {
			case key == "config":
				return fmt.Errorf("a config file cannot name another (%q)", value)
			case fl == nil && len(owners[key]) > 0:
				return nil // another command's key
			case fl == nil:
				return fmt.Errorf("unknown key %q%s", key, suggest(key, owners))
			case set[key]:
				return nil // the command line or the environment said otherwise
			}
			if isPathFlag(fl) {
				// Written in the file, a relative path means one beside it.
				value = resolvePath(value, filepath.Dir(path))
			}
			if err := setValue(fset, fl, value); err != nil {
				return valueError(key, " ", value, err)
			}
			return nil
		})
		var ee exitError
		switch {
		case errors.As(err, &ee): // the world's, as a value's check found it
			return failf("%s:%d: %s", path, n, ee.msg)
		case err != nil:
			return usagef("%s:%d: %s", path, n, err.Error())
		}
	}
	if err := sc.Err(); err != nil {
		return usagef("%s: %v", path, err)
	}
	return nil
}

// keyValueLine rewrites "key = value" and "key=value" as ff's "key value".
// A value that itself starts with "=" is written "key = =value".
func keyValueLine(line string) string {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' {
		return line
	}
	key, rest := t, ""
	if i := strings.IndexAny(t, " \t"); i >= 0 {
		key, rest = t[:i], strings.TrimSpace(t[i:])
	}
	if k, v, ok := strings.Cut(key, "="); ok {
		return k + " " + strings.TrimSpace(v+" "+rest)
	}
	if strings.HasPrefix(rest, "=") {
		return key + " " + strings.TrimSpace(rest[1:])
	}
	return t
}

// isPathFlag tells the flags whose value is a file or a folder (their
// usage names it: --root FOLDER, --audit FILE).
func isPathFlag(f *flag.Flag) bool {
	arg, _ := flag.UnquoteUsage(f)
	return arg == "file" || arg == "folder"
}

// resolvePath expands a leading ~ to the home folder and, if dir is not
// empty, makes a relative path relative to dir.
func resolvePath(p, dir string) string {
	p = assembly.ExpandHome(p)
	if dir != "" && p != "" && !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p
}

// defaultConfig is the config file read when neither --config nor
// MOAT_CONFIG names one: moat/config in the user's config folder
// ($XDG_CONFIG_HOME, else ~/.config, on Linux; ~/Library/Application
// Support on macOS; %AppData% on Windows). "" when there is none.
func defaultConfig() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "moat", "config")
}

// suggest names the known key closest to a misspelt one, if one is close.
func suggest(key string, owners keyOwners) string {
	names := make([]string, 0, len(owners))
	for k := range owners {
		names = append(names, k)
	}
	sort.Strings(names) // the same suggestion every time
	return closest(key, names)
}

// suggestCommand names the command closest to a misspelt one, if one is close.
func suggestCommand(name string, cmds []*ffcli.Command) string {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name
	}
	return closest(name, names)
}

// closest is ` (did you mean "x"?)` for the first of names at most two
// edits from s, or "".
func closest(s string, names []string) string {
	best, bestD := "", 3
	for _, k := range names {
		if d := nearest.Distance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// warnUnknownVars says which MOAT_* variables no command has a flag for:
// a misspelt one (MOAT_MODLE) would otherwise be ignored without a word.
func warnUnknownVars(e *env, owners keyOwners) {
	if e.environ == nil {
		return
	}
	known := make([]string, 0, len(owners))
	isKnown := map[string]bool{}
	for name := range owners {
		known = append(known, envName(name))
		isKnown[envName(name)] = true
	}
	sort.Strings(known) // the same suggestion every time
	for _, kv := range e.environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "MOAT_") || isKnown[k] || strings.HasPrefix(k, "MOAT_TEST_") {
			continue // MOAT_TEST_*: the test suite's own (MOAT_TEST_CACHE)
		}
		fmt.Fprintf(e.stderr, "moat: warning: %s is not a moat variable%s; it is ignored\n", k, closest(k, known))
	}
}

// envName is the variable that sets a flag: --max-turns is MOAT_MAX_TURNS.
func envName(flagName string) string {
	return "MOAT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// valueError words a value that was refused, after where it came from:
// `--timeout "5": invalid duration (want a unit, like 30s)`, or for a value
// that parsed but is not allowed, whose check names the value if it helps,
// `--max-turns: must be at least 1, got 0`. sep joins source and value:
// " " for flags and config keys, "=" for variables.
func valueError(source, sep, value string, err error) error {
	var ce checkError
	var we worldError
	switch {
	case errors.As(err, &we):
		return failf("%s: %v", source, we.err)
	case errors.As(err, &ce):
		return usagef("%s: %v", source, ce.err)
	}
	return usagef("%s%s%q: %v", source, sep, value, err)
}

// checkError is a value that parsed but that its flag does not allow.
type checkError struct{ err error }

func (e checkError) Error() string { return e.err.Error() }

// worldError is a value its flag's check refused because of what is on
// the machine, not how it is written (a --root folder that is not there):
// a failure (exit 1), not a usage error.
type worldError struct{ err error }

func (e worldError) Error() string { return e.err.Error() }

// onDisk marks a check's refusal as the world's (worldError).
func onDisk(check func() error) func() error {
	return func() error {
		if err := check(); err != nil {
			return worldError{err}
		}
		return nil
	}
}

// checked is a flag value that is also checked on every Set, so that a
// value out of bounds is refused where it was given (flag, variable, or
// file and line), like one that does not parse. Defaults are not checked:
// they are right by construction.
type checked struct {
	flag.Value
	check func() error
}

func (c checked) Set(s string) error {
	if err := c.Value.Set(s); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		if _, ok := err.(worldError); ok {
			return err
		}
		return checkError{err}
	}
	return nil
}

// Get and IsBoolFlag pass through, so the flag still reads as its type.
func (c checked) Get() any {
	if g, ok := c.Value.(flag.Getter); ok {
		return g.Get()
	}
	return c.Value.String()
}

func (c checked) IsBoolFlag() bool {
	b, ok := c.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// validate makes fs's flag name run check after each value it is given.
func validate(fs *flag.FlagSet, name string, check func() error) {
	f := fs.Lookup(name)
	f.Value = checked{f.Value, check}
}

// oneOf allows only the given words: `want ask or deny, got "maybe"`.
func oneOf(p *string, words ...string) func() error {
	return func() error {
		for _, w := range words {
			if *p == w {
				return nil
			}
		}
		return fmt.Errorf("want %s or %s, got %q", strings.Join(words[:len(words)-1], ", "), words[len(words)-1], *p)
	}
}

// atLeast allows numbers from least up; why, if not empty, says what the
// bound is for.
func atLeast(p *int, least int, why string) func() error {
	return func() error {
		if *p >= least {
			return nil
		}
		if why != "" {
			return fmt.Errorf("must be at least %d, got %d: %s", least, *p, why)
		}
		return fmt.Errorf("must be at least %d, got %d", least, *p)
	}
}

// positive allows numbers and durations above zero.
func positive[T int | int64 | time.Duration](p *T) func() error {
	return func() error {
		if *p > 0 {
			return nil
		}
		return fmt.Errorf("must be positive, got %v", *p)
	}
}

// parsedBy allows the values parse accepts.
func parsedBy[T any](p *string, parse func(string) (T, error)) func() error {
	return func() error {
		_, err := parse(*p)
		return err
	}
}

// setValue sets a flag and, when the value does not parse, says what it
// should look like: the flag package only says "parse error".
func setValue(fset *flag.FlagSet, f *flag.Flag, value string) error {
	err := fset.Set(f.Name, value)
	var ce checkError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err
	}
	switch g.Get().(type) {
	case time.Duration:
		if _, aerr := strconv.ParseFloat(value, 64); aerr == nil {
			return errors.New("invalid duration (want a unit, like 30s)")
		}
		return errors.New("invalid duration (want a number and a unit, like 30s, 5m or 1h30m)")
	case int, int64, uint, uint64:
		if errors.Is(err, strconv.ErrRange) || strings.Contains(err.Error(), "out of range") {
			return errors.New("number out of range")
		}
		return errors.New("not a whole number")
	case bool:
		return errors.New("want true or false")
	}
	return err
}
