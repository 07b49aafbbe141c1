package main

import (
	"errors"
	"flag"
	"net/url"
	"os"
	"reflect"
	"strings"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/limits"
)

// common holds the flags every command shares: where the sandbox is and how
// tightly it is held. host/assembly opens the sandbox they describe
// (opts).
type common struct {
	roots     []string       // --root, each given (host/assembly.AddRoot decides how many)
	lim       limits.Options // the limits, lists and how tightly calls are held, a flag each (from its tags)
	cacheDir  string
	config    string
	allowHome bool

	o *assembly.Options // made from the flags on first use (opts)
}

func (c *common) register(fs *flag.FlagSet) {
	c.registerSandbox(fs, ".", "the sandbox root: the `folder` the tools can see; give it again for several roots, each named by its base name (list_dir \".\" lists them)", nil)
	fs.BoolVar(&c.allowHome, "allow-home", false, "allow a root that is your home folder or a folder above it (refused by default: the model could read every project, credential and setting there, moat's own included)")
	fs.StringVar(&c.config, "config", "", "read flags from this `file`, one \"flag value\" or \"flag = value\" per line (keys of other commands are skipped; default: moat/config in the user config dir, if it is there)")
	validate(fs, "root", onDisk(func() error { return assembly.CheckRoot(c.root()) }))
}

// registerSandbox registers the flags that say where the sandbox runs
// and how tightly: --root (shown with the default rootDef and the help
// rootHelp, which differ for replay), the limits and lists of host/limits
// that keep selects (all for nil), and --cache-dir.
func (c *common) registerSandbox(fs *flag.FlagSet, rootDef, rootHelp string, keep func(reflect.StructField) bool) {
	fs.Var(rootsFlag{&c.roots, rootDef}, "root", rootHelp)
	c.lim = limits.Defaults()
	registerTagged(fs, &c.lim, keep)
	fs.StringVar(&c.cacheDir, "cache-dir", "", "the `folder` where compiled WebAssembly, and what redaction found in each unchanged file, are cached (default: the user cache dir + /moat)")
}

// root is the (last) root given, "." for none.
func (c *common) root() string {
	if len(c.roots) == 0 {
		return "."
	}
	return c.roots[len(c.roots)-1]
}

// rootsOr is every root given, "." for none.
func (c *common) rootsOr() []string {
	if len(c.roots) == 0 {
		return []string{"."}
	}
	return c.roots
}

// opts are the sandbox's options, made from the flags once (so the
// compile cache is chosen once per command); a copy may be changed.
func (c *common) opts(e *env) *assembly.Options {
	if c.o == nil {
		c.o = &assembly.Options{
			Roots: c.roots, Limits: c.lim, CacheDir: c.cacheDir, AllowHome: c.allowHome,
			ConfigFiles: []string{resolvePath(c.config, ""), resolvePath(e.getenv("MOAT_CONFIG"), ""), defaultConfig()},
			Notes:       e.stderr, Getenv: e.getenv,
		}
	}
	return c.o
}

// rootsFlag is --root's value: every value given is added to the roots
// by host/assembly's rule (AddRoot): a second --root, or a second root
// line in the config file, is a second root, never a replacement of the
// first without a word.
type rootsFlag struct {
	p   *[]string
	def string // shown as the default
}

func (r rootsFlag) String() string {
	if r.p == nil || len(*r.p) == 0 {
		return r.def
	}
	return (*r.p)[0]
}

func (r rootsFlag) Set(v string) error {
	roots, err := assembly.AddRoot(*r.p, v)
	*r.p = roots
	return err
}

// serverURL is the model server's address: --host, else $OLLAMA_HOST, else
// Ollama's default. Errors name where the bad address came from.
func serverURL(host string, getenv func(string) string) (*url.URL, error) {
	if host != "" {
		u, err := agent.ParseHost(host)
		if err != nil {
			return nil, usagef("--host: %v", err)
		}
		return u, nil
	}
	env := getenv("OLLAMA_HOST")
	u, err := agent.ParseHost(env)
	if err != nil {
		return nil, usagef("OLLAMA_HOST=%q: %v", env, err)
	}
	return u, nil
}

// stringList is a repeatable flag of globs. Each value may also be a
// comma-separated list, so that a variable or a config line can hold
// several (MOAT_DENY='*.md,*.txt': an MCP client's configuration has only
// arguments and variables). A comma inside {} or [] belongs to the glob
// (*.{md,txt} is one glob; [,] matches a comma), and spaces around a glob
// are dropped.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	parts := splitList(v)
	for i, p := range parts {
		// Spaces after a comma are the list's, not the glob's.
		if parts[i] = strings.TrimSpace(p); parts[i] == "" {
			return errors.New("an empty glob in the list (the separator is a comma; a comma in a name is [,])")
		}
	}
	*s = append(*s, parts...)
	return nil
}

// listSeparator separates the globs of one value of a repeatable flag.
const listSeparator = ','

// splitList cuts v at the commas that are outside {} and [].
func splitList(v string) []string {
	var parts []string
	depth, inClass, start := 0, false, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			i++ // an escaped character is never a separator
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case c == listSeparator && depth == 0:
			parts = append(parts, v[start:i])
			start = i + 1
		}
	}
	return append(parts, v[start:])
}

// fileError words a file named by a flag that could not be opened
// (host/assembly.FileError: a failure, exit 1).
func fileError(from, path string, err error) error { return assembly.FileError(from, path, err) }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
