//go:build !linux

package isolate

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/runner"
)

// MaybeChild refuses the child entry point: there is no child here.
func MaybeChild(ctx context.Context, args []string) (int, bool) {
	if len(args) == 0 || args[0] != ChildArg {
		return 0, false
	}
	fmt.Fprintln(os.Stderr, "moat:", ErrUnsupported)
	return 1, true
}

func startChild(ctx context.Context, cfg runner.Config) (engine.Executor, error) {
	return nil, &unavailableError{reason: "this is " + runtime.GOOS + ", and OS isolation needs Linux namespaces", cause: ErrUnsupported}
}

// Report is what Check saw of a sandbox child; see the Linux version.
type Report struct {
	PID        int
	Namespaces []Namespace
	Threads    int
	NoNewPrivs int
	Seccomp    int
	NoCaps     int
	CapsSeen   string
	Keyring    string
	Landlock   string
	Filter     string
	Root       []string
	Probes     []ProbeResult
}

// Namespace is one namespace of the child compared with the caller's.
type Namespace struct {
	Name string
	Own  bool
	Err  string
}

// NamespaceNames are the namespaces the child gets on Linux.
var NamespaceNames = []string{"user", "mnt", "net", "pid", "ipc", "uts"}

// Check returns ErrUnsupported: there are no namespaces here.
func Check(ctx context.Context, cfg runner.Config) (*Report, error) {
	return nil, &unavailableError{reason: "this is " + runtime.GOOS + ", and OS isolation needs Linux namespaces", cause: ErrUnsupported}
}

// LandlockABI returns ErrUnsupported: Landlock is a Linux LSM.
func LandlockABI() (int, error) { return 0, ErrUnsupported }
