package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/limits"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/runner"
	"github.com/moatdev/moat/host/toolspec"
	"github.com/moatdev/moat/isolate"
)

// common holds the flags every command shares: where the sandbox is and how
// tightly it is held.
type common struct {
	root       string
	resolver   string
	lim        limits.Options // the limits and lists, a flag each (from its tags)
	timeout    time.Duration
	redact     bool
	isolate    string
	cacheDir   string
	config     string
	rootsGiven int // how many times --root was set: once at most
	allowHome  bool
	oneShot    bool // one call, then the process ends (moat tool): see oneShotHeapLimit

	cache *cacheChoice // decided on first use (see chooseCache)
}

func (c *common) register(fs *flag.FlagSet) {
	c.root = "."
	fs.Var(oneRoot{&c.root, &c.rootsGiven}, "root", "the sandbox root: the only `folder` the tools can see (one; given twice is an error)")
	c.lim = limits.Defaults()
	registerTagged(fs, &c.lim)
	c.registerRun(fs)
	fs.BoolVar(&c.redact, "redact", true, "replace secrets (private keys, cloud keys, tokens: gitleaks' rules; passwords and keys in configuration files) with [redacted: RULE] in every file the tools read, so in everything they return, in recordings and in the write diff; --allow does not turn this off, --redact=false does")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "the `folder` where compiled WebAssembly is cached (default: the user cache dir + /moat)")
	fs.BoolVar(&c.allowHome, "allow-home", false, "allow a root that is your home folder or a folder above it (refused by default: the model could read every project, credential and setting there, moat's own included)")
	fs.StringVar(&c.config, "config", "", "read flags from this `file`, one \"flag value\" or \"flag = value\" per line (keys of other commands are skipped; default: moat/config in the user config dir, if it is there)")
	validate(fs, "root", onDisk(func() error { return checkRoot(c.root) }))
}

// registerRun declares the flags that say how the sandbox runs, which
// every command that runs the tools shares (moat replay included, which
// takes the limits and lists from the recording): --resolver, --isolate
// and --timeout.
func (c *common) registerRun(fs *flag.FlagSet) {
	fs.StringVar(&c.resolver, "resolver", "auto", "how paths are confined to the root: auto, openat2 (Linux RESOLVE_BENEATH) or root (Go os.Root)")
	fs.StringVar(&c.isolate, "isolate", "auto", "OS isolation of the tool process: auto (where the kernel allows), require, or off")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "deadline for one tool call")
	validate(fs, "resolver", parsedBy(&c.resolver, confine.ParseKind))
	validate(fs, "isolate", parsedBy(&c.isolate, isolate.ParseMode))
	validate(fs, "timeout", positive(&c.timeout))
}

// oneRoot is --root's value. It may be set once: a second --root (or a
// second root line in the config file) would otherwise replace the first
// without a word, and moat serves one root for now.
type oneRoot struct {
	p *string
	n *int
}

func (r oneRoot) String() string {
	if r.p == nil {
		return ""
	}
	return *r.p
}

func (r oneRoot) Set(v string) error {
	if *r.n++; *r.n > 1 {
		return fmt.Errorf("a second root (the first was %q): moat serves one folder for now, several roots are not supported yet; give one --root", *r.p)
	}
	*r.p = v
	return nil
}

// checkRoot allows only an existing folder as the root.
func checkRoot(root string) error {
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: no such folder", root)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", root)
	}
	// A folder this user cannot list would fail later, deep in the sandbox,
	// with a message that does not say it is the root.
	f, err := os.Open(root)
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("%s: permission denied (moat must be able to read the root)", root)
		}
		return fmt.Errorf("%s: %v", root, describe(err))
	}
	return nil
}

// sandbox is the one place the flags become a sandbox's configuration: the
// guest runner's and the isolation mode. Each value was checked when it was
// set; the root is checked again here because it may have gone since (and
// the default "." is never set). A value that does not parse is a usage
// error (exit 2); a root that is not there or cannot be read, a failure (1).
func (c *common) sandbox() (runner.Config, isolate.Mode, error) {
	kind, err := confine.ParseKind(c.resolver)
	if err != nil {
		return runner.Config{}, 0, usagef("--resolver: %v", err)
	}
	mode, err := isolate.ParseMode(c.isolate)
	if err != nil {
		return runner.Config{}, 0, usagef("--isolate: %v", err)
	}
	if err := checkRoot(c.root); err != nil {
		return runner.Config{}, 0, failf("--root: %v", err) // the folder, not the command line
	}
	abs, err := filepath.Abs(c.root)
	if err != nil {
		return runner.Config{}, 0, usagef("--root: %v", err)
	}
	if !c.allowHome {
		homes := []string{os.Getenv("HOME")}
		if u, err := user.Current(); err == nil {
			homes = append(homes, u.HomeDir)
		}
		if err := notHome(abs, homes...); err != nil {
			return runner.Config{}, 0, err
		}
	}
	return runner.Config{
		Root: abs, Resolver: kind, Deny: c.lim.Deny, Allow: c.lim.Allow,
		CacheDir: c.cachePath(), Timeout: c.timeout, NoRedact: !c.redact,
		HeapLimit: c.heapLimit(),
	}, mode, nil
}

// oneShotHeapLimit is the soft limit on the Go memory of the process that
// runs a one-shot call's guests (runner.Config.HeapLimit): a grep of Go's
// source tree keeps about 12 MiB live, and without the limit the heap
// grew to 30 MiB between collections; at 28 MiB the process's peak is
// about 11 MiB less, for the same CPU time (BENCHMARKS.md).
const oneShotHeapLimit = 28 << 20

// heapLimit is the sandbox's runner.Config.HeapLimit: oneShotHeapLimit
// for a one-shot call, none for a session, whose memory of what it found
// in the files may hold more than that.
func (c *common) heapLimit() int64 {
	if c.oneShot {
		return oneShotHeapLimit
	}
	return 0
}

// notHome refuses a root (absolute) that is a home folder ($HOME, the
// account's) or a folder above one, "/" always, symbolic links resolved
// on both: such a root holds every project, credential and tool setting
// of the user, and moat's own configuration and state. --allow-home lets
// it through.
func notHome(abs string, homes ...string) error {
	root := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		root = r
	}
	msg := "--root %s is %s: the model could read every project, credential file and tool setting under it (only the deny-list's names are hidden) and propose writes to any of them; give the project's folder instead, or --allow-home (MOAT_ALLOW_HOME=1, or allow-home in the config file) if you mean it"
	if filepath.Dir(root) == root {
		return usagef(msg, abs, "the file system's root, above your home folder")
	}
	for _, home := range homes {
		if home == "" || !filepath.IsAbs(home) {
			continue
		}
		h := filepath.Clean(home)
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		switch {
		case h == root:
			return usagef(msg, abs, "your home folder")
		case strings.HasPrefix(h, root+string(filepath.Separator)):
			return usagef(msg, abs, "above your home folder ("+h+")")
		}
	}
	return nil
}

// ownPaths are the files and folders that configure moat, which no
// proposal may write (policy.Protect), wherever the root is: the config
// file this command read or would read, in every place the environment
// could make it read one ($XDG_CONFIG_HOME, ~/.config, macOS's and
// Windows' folders; ~ both $HOME and the account's home folder),
// $MOAT_CONFIG and --config; the state folder (saved
// sessions) likewise; and the compile cache (native code moat runs):
// --cache-dir, the user's cache folder and the private fallback under
// the temporary folder.
func (c *common) ownPaths(getenv func(string) string) []string {
	var out []string
	add := func(p ...string) {
		for _, q := range p {
			if q == "" {
				continue
			}
			if a, err := filepath.Abs(resolvePath(q, "")); err == nil {
				out = append(out, a)
			}
		}
	}
	sub := func(base string, elem ...string) string {
		if base == "" || !filepath.IsAbs(base) {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	homes := []string{getenv("HOME")}
	if u, err := user.Current(); err == nil && u.HomeDir != "" && u.HomeDir != homes[0] {
		homes = append(homes, u.HomeDir) // the account's home, whatever $HOME says now
	}
	add(c.config, getenv("MOAT_CONFIG"), defaultConfig(), c.cacheDir, getenv("MOAT_CACHE_DIR"), c.cachePath())
	if d, err := os.UserConfigDir(); err == nil {
		add(sub(d, "moat"))
	}
	if d, err := os.UserCacheDir(); err == nil {
		add(sub(d, "moat"))
	}
	add(
		sub(getenv("XDG_CONFIG_HOME"), "moat"), sub(getenv("AppData"), "moat"),
		sub(getenv("XDG_STATE_HOME"), "moat"), sub(getenv("LocalAppData"), "moat"),
		sub(getenv("XDG_CACHE_HOME"), "moat"),
		filepath.Join(os.TempDir(), fmt.Sprintf("moat-cache-%d", os.Getuid())),
	)
	for _, home := range homes {
		add(sub(home, ".config", "moat"), sub(home, "Library", "Application Support", "moat"),
			sub(home, ".local", "state", "moat"), sub(home, ".cache", "moat"), sub(home, "Library", "Caches", "moat"))
	}
	return out
}

// cachePath is the compile cache this command uses.
func (c *common) cachePath() string { return c.chooseCache().dir }

// cacheChoice is the compile cache a command uses and, when it is not the
// one asked for (--cache-dir, else the user's cache folder), why.
type cacheChoice struct {
	dir    string // "" for none: the guest is compiled for every command
	wanted string // the folder asked for, when dir is another
	why    string // why wanted could not be used
	noted  bool   // the note has been shown
}

// chooseCache decides the compile cache once per command. A cache that
// cannot be written does not fail anything, but it makes every command
// compile the guest again, 15 times slower than loading it: so moat falls
// back to a private folder of its own under the system's temporary
// folder, and says so (note).
func (c *common) chooseCache() *cacheChoice {
	if c.cache != nil {
		return c.cache
	}
	want := c.cacheDir
	if want == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			c.cache = fallbackCache("", err)
			return c.cache
		}
		want = filepath.Join(d, "moat")
	}
	if err := writableCache(want); err != nil {
		c.cache = fallbackCache(want, err)
	} else {
		c.cache = &cacheChoice{dir: want}
	}
	return c.cache
}

// note says once, on w, that the cache is not the one asked for.
func (ch *cacheChoice) note(w io.Writer) {
	if ch.why == "" || ch.noted {
		return
	}
	ch.noted = true
	switch {
	case ch.dir == "":
		fmt.Fprintf(w, "moat: no compile cache (%s), so the tools are compiled anew each time (seconds); give a folder you can write with --cache-dir\n", ch.why)
	case ch.wanted == "":
		fmt.Fprintf(w, "moat: compile cache in %s (%s); choose one with --cache-dir\n", ch.dir, ch.why)
	default:
		fmt.Fprintf(w, "moat: the compile cache %s cannot be written (%s); using %s instead (choose with --cache-dir)\n", ch.wanted, ch.why, ch.dir)
	}
}

// fallbackCache is the private cache under the temporary folder, for when
// wanted cannot be used.
func fallbackCache(wanted string, err error) *cacheChoice {
	why := describe(err)
	if wanted == "" {
		why = "no user cache folder: " + why
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("moat-cache-%d", os.Getuid()))
	if perr := privateCache(dir); perr != nil {
		// Someone else's, or not a folder: a fresh one, cold, for this
		// command alone.
		fresh, ferr := os.MkdirTemp("", "moat-cache-")
		if ferr != nil {
			return &cacheChoice{wanted: wanted, why: why}
		}
		dir = fresh
	}
	return &cacheChoice{dir: dir, wanted: wanted, why: why}
}

// writableCache makes sure dir (and wazero's folder in it) exists and that
// a file can be created there.
func writableCache(dir string) error {
	sub := filepath.Join(dir, "wazero")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(sub, ".moat-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// privateCache makes sure dir is a folder only this user can write, not a
// symbolic link: the temporary folder is shared, and the cache holds
// native code that moat runs, so a folder another user made (or can
// write) must not be used.
func privateCache(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("%s is not a private folder of this user", dir)
	}
	return writableCache(dir)
}

// describe is an error's reason without the path it repeats.
func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + " " + pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// openEngine builds the whole sandbox for one session: policy, catalogue and
// the guest executor, isolated or in-process as --isolate says. Notices
// (such as why isolation is unavailable) go to notes.
//
// w may be nil: no writes offered.
func (c *common) openEngine(ctx context.Context, notes io.Writer, w *writeFlags) (*engine.Engine, error) {
	var mk proposerFunc
	if w != nil {
		mk = func(abs string, pol *policy.Policy, red *redact.Redactor) (engine.Proposer, error) {
			return w.proposer(abs, pol, red, notes)
		}
	}
	return c.openEngineWith(ctx, notes, mk)
}

// proposerFunc builds a session's write proposer once the absolute root,
// the policy and the redactor (nil with --redact=false) are known; a nil
// proposerFunc or a nil result offers no writes.
type proposerFunc func(absRoot string, pol *policy.Policy, red *redact.Redactor) (engine.Proposer, error)

// openEngineWith is openEngine with any proposer: moat mcp's asks through
// the MCP client instead of the terminal.
func (c *common) openEngineWith(ctx context.Context, notes io.Writer, mk proposerFunc) (*engine.Engine, error) {
	cfg, mode, err := c.sandbox()
	if err != nil {
		return nil, err
	}
	c.chooseCache().note(notes)
	pol, err := policy.New(c.lim.Deny, c.lim.Allow)
	if err != nil {
		return nil, usagef("%v", err)
	}
	pol.Protect(c.ownPaths(os.Getenv)...)
	cat, err := toolspec.New()
	if err != nil {
		return nil, err
	}
	var red *redact.Redactor
	if c.redact {
		red = redact.New()
	}
	var p engine.Proposer
	if mk != nil {
		if p, err = mk(cfg.Root, pol, red); err != nil {
			return nil, err
		}
	}
	ex, err := isolate.Start(ctx, mode, cfg, notes)
	if err != nil {
		if cl, ok := p.(io.Closer); ok {
			cl.Close()
		}
		return nil, exitError{code: exitNoIsolat, msg: err.Error()}
	}
	return engine.New(engine.Options{Catalog: cat, Policy: pol, Limits: c.lim.Guest(), Exec: ex, Proposer: p, Root: cfg.Root, Redactor: red})
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

// fileError words a file named by a flag that could not be opened, in one
// line that says what to change: `--audit /x/a.jsonl: no such folder: /x`.
// It is a failure (exit 1), not a usage error: the command line is right,
// the file system is not as it says.
// from is where the name came from: "--audit", or "MOAT_AUDIT" (then the
// line reads MOAT_AUDIT="/x/a.jsonl").
func fileError(from, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	why := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file"
		if dir := filepath.Dir(path); !isDir(dir) {
			why = "no such folder: " + dir
		}
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	case errors.Is(err, syscall.EISDIR) || isDir(path):
		why = "is a folder, not a file"
	case errors.Is(err, syscall.ENOTDIR):
		why = "a part of the path is a file, not a folder"
	}
	switch {
	case from == "": // an argument, not a flag's value
		return failf("%s: %s", path, why)
	case strings.HasPrefix(from, "MOAT_"):
		return failf("%s=%q: %s", from, path, why)
	}
	return failf("%s %s: %s", from, path, why)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
