// Package runner runs the WASI tool guest in wazero on the confined
// filesystem: compiled once per process through an on-disk cache, one
// long-lived instance serving calls over its stdin and stdout, with a memory
// limit and a per-call deadline.
package runner

import (
	"context"
	"time"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
)

// Config describes one sandbox. It is plain data so the isolated child can
// receive it over a pipe.
type Config struct {
	Root     string        // absolute path of the sandbox root
	Resolver confine.Kind  // how paths are confined
	Deny     []string      // extra deny patterns
	Allow    []string      // allow patterns
	CacheDir string        // compiled-module cache; "" for none
	Timeout  time.Duration // per-call deadline
}

// Runner executes tool calls in the guest.
type Runner struct{}

// New compiles (or loads from cache) the guest and starts an instance.
func New(ctx context.Context, cfg Config) (*Runner, error) { panic("TODO") }

// Exec runs one call.
func (r *Runner) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	panic("TODO")
}

// Close stops the guest.
func (r *Runner) Close() error { return nil }
