package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/policy"
	"github.com/moatdev/moat/host/redact"
	"github.com/moatdev/moat/host/runner"
	"github.com/moatdev/moat/host/toolspec"
	"github.com/moatdev/moat/isolate"
)

// common holds the flags every command shares: where the sandbox is and how
// tightly it is held.
type common struct {
	root         string
	resolver     string
	deny, allow  stringList
	maxReadBytes int64
	maxResults   int
	timeout      time.Duration
	noIgnore     bool
	redact       bool
	isolate      string
	cacheDir     string
	config       string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.root, "root", ".", "the sandbox root: the only `folder` the tools can see")
	fs.StringVar(&c.resolver, "resolver", "auto", "how paths are confined to the root: auto, openat2 (Linux RESOLVE_BENEATH) or root (Go os.Root)")
	fs.Var(&c.deny, "deny", "also deny paths matching this `glob` (repeatable; a name without / matches at any depth)")
	fs.Var(&c.allow, "allow", "allow paths matching this `glob` even if the deny-list matches (repeatable), e.g. .env.example")
	fs.Int64Var(&c.maxReadBytes, "max-read-bytes", proto.DefaultMaxReadBytes, "most bytes read_file returns in one call; larger files are paged")
	fs.IntVar(&c.maxResults, "max-results", proto.DefaultMaxResults, "most grep hits or glob matches in one call")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "deadline for one tool call")
	fs.BoolVar(&c.noIgnore, "no-ignore", false, "let grep and glob see files that .gitignore excludes")
	fs.BoolVar(&c.redact, "redact", true, "replace well-known secrets (private keys, cloud keys, tokens; gitleaks' rules) with [redacted: RULE] in what the tools return and in the write diff; --allow does not turn this off, --redact=false does")
	fs.StringVar(&c.isolate, "isolate", "auto", "OS isolation of the tool process: auto (where the kernel allows), require, or off")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "where compiled WebAssembly is cached (default: the user cache dir + /moat)")
	fs.StringVar(&c.config, "config", "", "read flags from this `file`, one \"flag value\" per line (keys of other commands are skipped)")
	validate(fs, "root", func() error { return checkRoot(c.root) })
	validate(fs, "resolver", parsedBy(&c.resolver, confine.ParseKind))
	validate(fs, "isolate", parsedBy(&c.isolate, isolate.ParseMode))
	validate(fs, "max-read-bytes", positive(&c.maxReadBytes))
	validate(fs, "max-results", positive(&c.maxResults))
	validate(fs, "timeout", positive(&c.timeout))
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
	return nil
}

func (c *common) limits() proto.Limits {
	return proto.Limits{MaxReadBytes: c.maxReadBytes, MaxResults: c.maxResults, NoIgnore: c.noIgnore}
}

// sandbox is the one place the flags become a sandbox's configuration: the
// guest runner's and the isolation mode. Each value was checked when it was
// set; the root is checked again here because it may have gone since (and
// the default "." is never set). Errors are usage errors (exit 2).
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
		return runner.Config{}, 0, usagef("--root: %v", err)
	}
	abs, err := filepath.Abs(c.root)
	if err != nil {
		return runner.Config{}, 0, usagef("--root: %v", err)
	}
	return runner.Config{
		Root: abs, Resolver: kind, Deny: c.deny, Allow: c.allow,
		CacheDir: c.cachePath(), Timeout: c.timeout,
	}, mode, nil
}

func (c *common) cachePath() string {
	if c.cacheDir != "" {
		return c.cacheDir
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "" // no cache: compile every time, still correct
	}
	return filepath.Join(d, "moat")
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
	pol, err := policy.New(c.deny, c.allow)
	if err != nil {
		return nil, usagef("%v", err)
	}
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
	return engine.New(engine.Options{Catalog: cat, Policy: pol, Limits: c.limits(), Exec: ex, Proposer: p, Root: cfg.Root, Redactor: red})
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

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
