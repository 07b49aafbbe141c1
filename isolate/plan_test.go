package isolate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/runner"
)

func TestNewPlan(t *testing.T) {
	cfg := runner.Config{Root: "/home/u/proj", Resolver: confine.Root, Deny: []string{"*.pem"}, CacheDir: "/home/u/.cache/moat", Timeout: time.Second}
	p, err := NewPlan(cfg, 1000, 1001)
	if err != nil {
		t.Fatal(err)
	}
	want := uintptr(CloneNewUser | CloneNewNS | CloneNewNet | CloneNewPID | CloneNewIPC | CloneNewUTS)
	if p.Cloneflags != want {
		t.Errorf("Cloneflags = %#x, want %#x", p.Cloneflags, want)
	}
	if len(p.UIDMap) != 1 || p.UIDMap[0] != (IDMap{Inside: 0, Outside: 1000, Size: 1}) {
		t.Errorf("UIDMap = %+v", p.UIDMap)
	}
	if len(p.GIDMap) != 1 || p.GIDMap[0] != (IDMap{Inside: 0, Outside: 1001, Size: 1}) {
		t.Errorf("GIDMap = %+v", p.GIDMap)
	}
	if p.Setgroups {
		t.Error("setgroups must be denied")
	}
	if len(p.Env) != 1 || p.Env[0] != childGODEBUG {
		t.Errorf("Env = %#v, want only %s (nil would inherit ours)", p.Env, childGODEBUG)
	}
	if !p.NoNewPrivs || !p.Seccomp {
		t.Error("no_new_privs and seccomp must be on")
	}
	// The root tmpfs first, then only the two read-only binds.
	wantMounts := []Mount{
		{Kind: "tmpfs", Target: "/", ReadOnly: true},
		{Kind: "bind", Source: "/home/u/proj", Target: InsideRoot, ReadOnly: true},
		{Kind: "bind", Source: "/home/u/.cache/moat", Target: InsideCache, ReadOnly: true},
	}
	if len(p.Mounts) != len(wantMounts) {
		t.Fatalf("Mounts = %+v", p.Mounts)
	}
	for i, m := range p.Mounts {
		m.Data = ""
		if m != wantMounts[i] {
			t.Errorf("Mounts[%d] = %+v, want %+v", i, m, wantMounts[i])
		}
	}
	if p.Runner.Root != InsideRoot || p.Runner.CacheDir != InsideCache {
		t.Errorf("runner paths not rewritten: %+v", p.Runner)
	}
	if p.Runner.Resolver != confine.Root || p.Runner.Timeout != time.Second || p.Runner.Deny[0] != "*.pem" {
		t.Errorf("runner settings lost: %+v", p.Runner)
	}
	if strings.Join(p.Landlock, ",") != InsideRoot+","+InsideCache {
		t.Errorf("Landlock = %v", p.Landlock)
	}
	// No core dumps of a child that holds file contents.
	if len(p.Rlimits) == 0 || p.Rlimits[0] != (Rlimit{Name: "CORE"}) {
		t.Errorf("Rlimits = %+v", p.Rlimits)
	}
}

func TestNewPlanNoCache(t *testing.T) {
	p, err := NewPlan(runner.Config{Root: "/r"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Mounts {
		if m.Target == InsideCache {
			t.Errorf("cache mounted without a cache dir: %+v", m)
		}
	}
	if p.Runner.CacheDir != "" {
		t.Errorf("runner CacheDir = %q, want none", p.Runner.CacheDir)
	}
}

func TestNewPlanRejects(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      runner.Config
		uid, gid int
	}{
		{"relative root", runner.Config{Root: "proj"}, 0, 0},
		{"empty root", runner.Config{}, 0, 0},
		{"unclean root", runner.Config{Root: "/a/../b"}, 0, 0},
		{"relative cache", runner.Config{Root: "/a", CacheDir: "c"}, 0, 0},
		{"unknown uid", runner.Config{Root: "/a"}, -1, 0},
	} {
		if _, err := NewPlan(tc.cfg, tc.uid, tc.gid); err == nil {
			t.Errorf("%s: NewPlan accepted %+v", tc.name, tc.cfg)
		}
	}
}

func TestParseMode(t *testing.T) {
	for s, want := range map[string]Mode{"": Auto, "auto": Auto, "require": Require, "off": Off} {
		if m, err := ParseMode(s); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
		if want.String() == "" {
			t.Error("empty String")
		}
	}
	if _, err := ParseMode("yes"); err == nil {
		t.Error("ParseMode accepted yes")
	}
}

func TestExplain(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(name string) ([]byte, error) {
			if v, ok := m[name]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		}
	}
	eperm := &StepError{Step: "clone", Err: os.ErrPermission}
	for _, tc := range []struct {
		name  string
		euid  int
		files map[string]string
		want  string
	}{
		{"apparmor", 1000, map[string]string{sysctlAppArmor: "1\n"}, "kernel.apparmor_restrict_unprivileged_userns=1"},
		{"apparmor ignores root", 0, map[string]string{sysctlAppArmor: "1\n"}, "creating namespaces was refused"},
		{"max user namespaces", 0, map[string]string{sysctlMaxUserNS: "0\n"}, "user.max_user_namespaces=0"},
		{"debian switch", 1000, map[string]string{sysctlUsernsClone: "0"}, "kernel.unprivileged_userns_clone=0"},
		{"docker", 0, map[string]string{"/.dockerenv": ""}, "seccomp=unconfined"},
		{"plain", 0, nil, "creating namespaces was refused"},
	} {
		got := explain(eperm, tc.euid, files(tc.files))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: explain = %q, want it to mention %q", tc.name, got, tc.want)
		}
	}
	other := errors.New("isolate: pivot_root: invalid argument")
	if got := explain(other, 0, files(nil)); got != other.Error() {
		t.Errorf("explain(other) = %q", got)
	}
}

func TestStepError(t *testing.T) {
	err := error(&StepError{Step: "pivot_root", Err: fs.ErrPermission})
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "pivot_root") {
		t.Errorf("StepError = %v", err)
	}
	u := error(&unavailableError{reason: "r", cause: err})
	if !errors.Is(u, ErrUnavailable) || !errors.Is(u, fs.ErrPermission) {
		t.Errorf("unavailableError does not match its sentinels: %v", u)
	}
}

// TestPlanCarriesRedact: --redact=false reaches the child's runner
// through the plan, as the child reads it (JSON), and the default is the
// redacted view.
func TestPlanCarriesRedact(t *testing.T) {
	for _, off := range []bool{false, true} {
		p, err := NewPlan(runner.Config{Root: "/home/u/proj", NoRedact: off}, 1000, 1000)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Plan
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Runner.NoRedact != off {
			t.Errorf("NoRedact %v arrived as %v", off, back.Runner.NoRedact)
		}
	}
}

// TestNewPlanSeveralRoots: each root is its own read-only bind at
// /sandbox/LABEL and its own Landlock rule, and the child's runner names
// them there; a label that is not one path element is refused.
func TestNewPlanSeveralRoots(t *testing.T) {
	cfg := runner.Config{Roots: []confine.Dir{{Label: "src", Path: "/home/u/src"}, {Label: "src-2", Path: "/work/src"}}, CacheDir: "/c"}
	p, err := NewPlan(cfg, 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.Mounts[1:] {
		if m.Kind != "bind" || !m.ReadOnly {
			t.Errorf("mount %+v is not a read-only bind", m)
		}
		got = append(got, m.Source+"->"+m.Target)
	}
	if want := "/home/u/src->/sandbox/src,/work/src->/sandbox/src-2,/c->/cache"; strings.Join(got, ",") != want {
		t.Errorf("binds %v, want %s", got, want)
	}
	if want := "/sandbox/src,/sandbox/src-2,/cache"; strings.Join(p.Landlock, ",") != want {
		t.Errorf("Landlock = %v, want %s", p.Landlock, want)
	}
	if p.Runner.Root != "" || len(p.Runner.Roots) != 2 || p.Runner.Roots[1] != (confine.Dir{Label: "src-2", Path: "/sandbox/src-2"}) {
		t.Errorf("runner roots not rewritten: %+v", p.Runner)
	}
	if cfg.Roots[0].Path != "/home/u/src" {
		t.Errorf("NewPlan changed its caller's roots: %+v", cfg.Roots)
	}
	for _, bad := range []string{"", ".", "..", "a/b", "../x"} {
		cfg := runner.Config{Roots: []confine.Dir{{Label: "a", Path: "/a"}, {Label: bad, Path: "/b"}}}
		if _, err := NewPlan(cfg, 1000, 1000); err == nil {
			t.Errorf("label %q accepted", bad)
		}
	}
}
