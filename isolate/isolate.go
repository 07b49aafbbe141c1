// Package isolate runs the tool sandbox in a re-executed child process inside
// new Linux user, mount, network, PID, IPC and UTS namespaces.
package isolate

import (
	"context"
	"fmt"
	"io"

	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/runner"
)

// Mode is the --isolate setting.
type Mode int

const (
	Auto Mode = iota
	Require
	Off
)

// ParseMode parses --isolate.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "auto", "":
		return Auto, nil
	case "require":
		return Require, nil
	case "off":
		return Off, nil
	}
	return 0, fmt.Errorf("unknown isolation mode %q (want auto, require or off)", s)
}

// Start returns an executor for cfg: TODO(isolate) isolated child; for now in-process.
func Start(ctx context.Context, mode Mode, cfg runner.Config, notes io.Writer) (engine.Executor, error) {
	return runner.New(ctx, cfg)
}

// MaybeChild runs the child entry point when args say so.
func MaybeChild(ctx context.Context, args []string) (int, bool) { return 0, false }
