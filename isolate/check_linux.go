package isolate

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moatdev/moat/host/runner"
)

// Report is what Check saw of a live sandbox child, from inside (Probes)
// and from outside through /proc.
type Report struct {
	PID        int
	Namespaces []Namespace   // user, mnt, net, pid, ipc, uts: the child's own or the host's
	Threads    int           // the child's threads when inspected
	NoNewPrivs int           // how many of them have no_new_privs
	Seccomp    int           // how many of them run under a seccomp filter
	NoCaps     int           // how many of them hold no capability in any set (CapInh, CapPrm, CapEff, CapBnd, CapAmb all zero)
	CapsSeen   string        // one thread's sets when some thread holds a capability
	Keyring    string        // the child's session keyring: "fresh: ..." when it is its own and empty
	Landlock   string        // what the Landlock step did
	Filter     string        // what the seccomp step did
	Root       []string      // the entries of the child's / as seen through /proc/PID/root
	FDs        []string      // the child's descriptors above stderr, "N -> target" as /proc/PID/fd shows them
	Probes     []ProbeResult // escapes tried from inside
}

// Namespace is one namespace of the child compared with the caller's.
type Namespace struct {
	Name string
	Own  bool // the child's differs from this process's
	Err  string
}

// NamespaceNames are the namespaces the child gets, in /proc/PID/ns names.
var NamespaceNames = []string{"user", "mnt", "net", "pid", "ipc", "uts"}

// Check starts a sandbox child for cfg that, instead of serving calls,
// tries to escape (reach the host's files, a listener of this process on
// 127.0.0.1, a host process, write the root) and stays alive while this
// process inspects it through /proc. The doctor reports it; tests assert it.
func Check(ctx context.Context, cfg runner.Config) (*Report, error) {
	return check(ctx, cfg, probeSpec{})
}

func check(ctx context.Context, cfg runner.Config, spec probeSpec, edit ...func(*Plan)) (*Report, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	spec.Dial = ln.Addr().String()
	spec.HostPID = os.Getpid()
	spec.Hold = true
	cfg.CacheDir = "" // the probe never builds a runner
	plan, err := hostPlan(cfg)
	if err != nil {
		return nil, err
	}
	for _, e := range edit {
		e(&plan)
	}
	c, err := spawn(ctx, hello{Plan: plan, Probe: &spec})
	if err != nil {
		return nil, &unavailableError{reason: explain(err, os.Geteuid(), os.ReadFile), cause: err}
	}
	defer c.stop()
	pid := c.pid()
	rep := &Report{PID: pid, Landlock: c.ready.Landlock, Filter: c.ready.Seccomp, Probes: c.ready.Probe}
	for _, n := range NamespaceNames {
		ns := Namespace{Name: n}
		mine, err1 := os.Readlink("/proc/self/ns/" + n)
		its, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, n))
		switch {
		case err1 != nil:
			ns.Err = err1.Error()
		case err2 != nil:
			ns.Err = err2.Error()
		default:
			ns.Own = mine != its
		}
		rep.Namespaces = append(rep.Namespaces, ns)
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		rep.Threads++
		for _, l := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(l, ":")
			v = strings.TrimSpace(v)
			if k == "NoNewPrivs" && v == "1" {
				rep.NoNewPrivs++
			}
			if k == "Seccomp" && v == "2" {
				rep.Seccomp++
			}
		}
		if caps := capSets(string(b)); caps == "" {
			rep.NoCaps++
		} else {
			rep.CapsSeen = caps
		}
	}
	rep.Keyring = keyringReport(c.keyringErr, c.ready.Keyring)
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		for _, e := range ents {
			if e.Name() == "0" || e.Name() == "1" || e.Name() == "2" {
				continue
			}
			target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
			rep.FDs = append(rep.FDs, e.Name()+" -> "+target)
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/root", pid)); err == nil {
		for _, e := range ents {
			rep.Root = append(rep.Root, e.Name())
		}
		sort.Strings(rep.Root)
	}
	return rep, nil
}

// capSets is "" when a /proc/PID/task/TID/status shows no capability in
// any of the five sets, else those sets as the file spells them.
func capSets(status string) string {
	var held []string
	for _, l := range strings.Split(status, "\n") {
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			if strings.Trim(v, "0") != "" {
				held = append(held, k+" "+v)
			}
		}
	}
	return strings.Join(held, ", ")
}

// keyringReport says what became of the child's session keyring: joinErr
// is the parent's forking thread's, seen what the child saw of its own.
func keyringReport(joinErr error, seen *keyringState) string {
	mine, mineErr := sessionKeyringID()
	switch {
	case joinErr != nil:
		return "not joined: keyctl was refused here (" + errName(joinErr) + "), so the child cannot reach a keyring either"
	case seen == nil:
		return "not reported by the child"
	case seen.Err != "":
		return "not read in the child: " + seen.Err
	case mineErr == nil && seen.ID == mine:
		return fmt.Sprintf("shared: the child has this process's session keyring %d (%d keys)", mine, seen.Keys)
	case seen.Keys != 0:
		return fmt.Sprintf("not empty: the child's session keyring %d holds %d keys", seen.ID, seen.Keys)
	}
	return fmt.Sprintf("fresh: an empty anonymous session keyring of its own (%d; this process's is %d)", seen.ID, mine)
}
