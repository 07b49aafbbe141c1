package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/engine"
	"github.com/moatdev/moat/host/fanout"
	"github.com/moatdev/moat/host/runner"
)

// TestMain lets the test binary be its own sandbox child. The child runs a
// fake runner (the real one is exercised through cmd/moat's scripts), so
// these tests show the isolation and the pipe protocol on their own.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		build := newFakeRunner
		if os.Getenv("MOAT_TEST_REAL_RUNNER") == "1" { // set through Plan.Env by startReal
			build = newRunner
		}
		os.Exit(runChild(context.Background(), os.Stdin, os.Stdout, build))
	}
	os.Exit(m.Run())
}

// fakeRunner answers from inside the child: "echo" returns its args,
// "read" reads {"path"} with a plain os.ReadFile (no confinement at all),
// "pid" returns the child's pid, "crash" exits, "hang" never answers.
type fakeRunner struct{}

func newFakeRunner(ctx context.Context, cfg runner.Config) (engine.Executor, error) {
	return fakeRunner{}, nil
}

func (fakeRunner) Exec(ctx context.Context, req proto.Request) (proto.Response, error) {
	resp := proto.Response{ID: req.ID}
	switch req.Tool {
	case "echo":
		resp.Text = string(req.Args)
	case "read":
		var a struct{ Path string }
		json.Unmarshal(req.Args, &a)
		b, err := os.ReadFile(a.Path)
		if err != nil {
			resp.Text, resp.IsError = errName(err), true
		} else {
			resp.Text = string(b)
		}
	case "pid":
		resp.Text = fmt.Sprint(os.Getpid())
	case "crash":
		os.Exit(3)
	case "hang":
		select {}
	case "fail":
		return resp, errors.New("guest out of memory")
	}
	return resp, nil
}

func (fakeRunner) Close() error { return nil }

// needUserns skips with the kernel's reason where namespaces cannot start.
func needUserns(t testing.TB) {
	t.Helper()
	if _, err := Check(context.Background(), runner.Config{Root: "/"}); err != nil {
		if errors.Is(err, ErrUnavailable) {
			t.Skipf("user namespaces unavailable here: %v", err)
		}
		t.Fatal(err)
	}
}

func TestCloneFlagValues(t *testing.T) {
	for got, want := range map[int]int{
		CloneNewNS: unix.CLONE_NEWNS, CloneNewUTS: unix.CLONE_NEWUTS, CloneNewIPC: unix.CLONE_NEWIPC,
		CloneNewUser: unix.CLONE_NEWUSER, CloneNewPID: unix.CLONE_NEWPID, CloneNewNet: unix.CLONE_NEWNET,
	} {
		if got != want {
			t.Errorf("clone flag %#x, unix says %#x", got, want)
		}
	}
}

// sandboxWithEscapes builds a root holding links to a secret outside it,
// absolute and relative, and returns the root and the secret's text.
func sandboxWithEscapes(t *testing.T) (root, secretPath, secret string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	secret = "moat-outside-secret"
	secretPath = filepath.Join(base, "secret.txt")
	must(t, os.WriteFile(secretPath, []byte(secret), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "inside.txt"), []byte("inside"), 0o644))
	must(t, os.Symlink(secretPath, filepath.Join(root, "abs-link")))
	must(t, os.Symlink("../secret.txt", filepath.Join(root, "rel-link")))
	must(t, os.Symlink("/etc/hostname", filepath.Join(root, "etc-link")))
	// A file its owner made unreadable: refused to the owner, and so to
	// the child, which runs as the owner with no capability.
	must(t, os.WriteFile(filepath.Join(root, "mode000"), []byte(secret), 0o000))
	must(t, os.Chmod(filepath.Join(root, "mode000"), 0o000))
	return root, secretPath, secret
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheck is the layer's proof from inside and outside: the host's
// files, network and processes are out of reach, the root is read-only,
// and every thread has no_new_privs and the seccomp filter.
func TestCheck(t *testing.T) {
	needUserns(t)
	root, _, _ := sandboxWithEscapes(t)
	rep, err := check(context.Background(), runner.Config{Root: root, Resolver: confine.Unconfined}, probeSpec{Read: []string{InsideRoot + "/abs-link", InsideRoot + "/mode000"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Threads == 0 || rep.NoCaps != rep.Threads {
		t.Errorf("no capability on %d of %d threads; one holds %s", rep.NoCaps, rep.Threads, rep.CapsSeen)
	}
	if !strings.HasPrefix(rep.Keyring, "fresh: ") {
		t.Errorf("session keyring: %s", rep.Keyring)
	}
	if !strings.HasPrefix(rep.Filter, fmt.Sprintf("allow-list, %d calls", len(allowedNumbers())+1)) {
		t.Errorf("seccomp: %s", rep.Filter)
	}
	for _, ns := range rep.Namespaces {
		if !ns.Own {
			t.Errorf("namespace %s is the host's (%s)", ns.Name, ns.Err)
		}
	}
	if rep.Threads == 0 || rep.NoNewPrivs != rep.Threads {
		t.Errorf("no_new_privs on %d of %d threads", rep.NoNewPrivs, rep.Threads)
	}
	if rep.Seccomp != rep.Threads {
		t.Errorf("seccomp on %d of %d threads (%s)", rep.Seccomp, rep.Threads, rep.Filter)
	}
	if strings.Join(rep.Root, ",") != "sandbox" {
		t.Errorf("child's / holds %v, want only sandbox", rep.Root)
	}
	want := map[string]string{
		"stat /etc": "ENOENT", "stat /home": "ENOENT", "stat /proc": "ENOENT", "stat /dev": "ENOENT",
		"write " + InsideRoot: "EROFS",
		// Not on the seccomp allow-list: refused before the kernel
		// looks at the arguments.
		"mkdir in /": "ENOSYS", "remount " + InsideRoot + " rw": "ENOSYS", "unshare mount namespace": "ENOSYS",
		"signal host pid " + fmt.Sprint(os.Getpid()): "ENOSYS",
		"keyctl read session keyring":                "ENOSYS", "add_key to session keyring": "ENOSYS", "request_key": "ENOSYS",
		"open_tree_attr /": "ENOSYS", "getppid": "ENOSYS", "socket AF_PACKET": "ENOSYS", "io_uring_setup": "ENOSYS",
		"read " + InsideRoot + "/abs-link": "ENOENT",
		// With every capability dropped, the owner's own mode 000 holds
		// (CAP_DAC_OVERRIDE in the namespace would have read it).
		"read " + InsideRoot + "/mode000": "EACCES",
		"own pid":                         "1",
	}
	seen := map[string]bool{}
	for _, p := range rep.Probes {
		seen[p.Name] = true
		if strings.HasPrefix(p.Name, "connect ") {
			if !p.Blocked {
				t.Errorf("the child reached the parent's listener on 127.0.0.1")
			}
			continue
		}
		if !p.Blocked {
			t.Errorf("probe %q succeeded: %s", p.Name, p.Detail)
		}
		if w, ok := want[p.Name]; ok && p.Detail != w {
			t.Errorf("probe %q: %s, want %s", p.Name, p.Detail, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("probe %q did not run", name)
		}
	}
	t.Logf("landlock: %s; seccomp: %s; keyring: %s; probes: %+v", rep.Landlock, rep.Filter, rep.Keyring, rep.Probes)
	assertLandlock(t, rep, false)
}

// TestSymlinkEscapeStoppedByIsolationAlone switches the confined filesystem
// off (confine.Unconfined; the fake runner reads with plain os.ReadFile) and
// shows each link really escapes without this layer, and cannot inside it.
func TestSymlinkEscapeStoppedByIsolationAlone(t *testing.T) {
	needUserns(t)
	root, _, secret := sandboxWithEscapes(t)
	for _, link := range []string{"abs-link", "rel-link"} {
		b, err := os.ReadFile(filepath.Join(root, link))
		if err != nil || string(b) != secret {
			t.Fatalf("without isolation %s should escape: %q, %v", link, b, err)
		}
	}
	ex := startFake(t, runner.Config{Root: root, Resolver: confine.Unconfined})
	for _, link := range []string{"abs-link", "rel-link", "etc-link"} {
		resp := call(t, ex, "read", `{"Path":"`+InsideRoot+"/"+link+`"}`)
		if !resp.IsError || strings.Contains(resp.Text, secret) {
			t.Errorf("inside the sandbox %s was followed: %+v", link, resp)
		}
	}
	if resp := call(t, ex, "read", `{"Path":"`+InsideRoot+`/inside.txt"}`); resp.IsError || resp.Text != "inside" {
		t.Errorf("a file inside the root is unreadable: %+v", resp)
	}
}

func startFake(t *testing.T, cfg runner.Config) *childExec {
	t.Helper()
	plan, err := hostPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &childExec{h: hello{Plan: plan}}
	c, err := spawn(context.Background(), e.h)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	t.Cleanup(func() { e.Close() })
	return e
}

func call(t testing.TB, ex engine.Executor, tool, args string) proto.Response {
	t.Helper()
	resp, err := ex.Exec(context.Background(), proto.Request{ID: 7, Tool: tool, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return resp
}

func TestExecutorProtocol(t *testing.T) {
	needUserns(t)
	ex := startFake(t, runner.Config{Root: t.TempDir()})
	if r := call(t, ex, "echo", `{"x":1}`); r.Text != `{"x":1}` || r.ID != 7 {
		t.Errorf("echo = %+v", r)
	}
	if r := call(t, ex, "pid", `{}`); r.Text != "1" {
		t.Errorf("the child is pid %s in its namespace, want 1", r.Text)
	}
	// A runner failure is an error, not a tool result.
	if _, err := ex.Exec(context.Background(), proto.Request{Tool: "fail", Args: json.RawMessage(`{}`)}); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("fail: %v", err)
	}
	// The process running the calls has its own mount and net namespace,
	// and its root holds the sandbox only.
	pid := ex.pid()
	for _, ns := range []string{"mnt", "net", "user", "pid"} {
		mine, _ := os.Readlink("/proc/self/ns/" + ns)
		its, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		if err != nil || mine == its {
			t.Errorf("child %d shares %s namespace %s (%v)", pid, ns, its, err)
		}
	}
}

func TestExecutorRestart(t *testing.T) {
	needUserns(t)
	ex := startFake(t, runner.Config{Root: t.TempDir()})
	first := ex.pid()
	// Killed between calls: the next call restarts it and succeeds.
	syscall.Kill(first, syscall.SIGKILL)
	if r := call(t, ex, "echo", `"again"`); r.Text != `"again"` {
		t.Errorf("after a restart echo = %+v", r)
	}
	if ex.pid() == first {
		t.Error("child was not restarted")
	}
	// Dying on every try: a clear error after one retry.
	_, err := ex.Exec(context.Background(), proto.Request{Tool: "crash", Args: json.RawMessage(`{}`)})
	if !errors.Is(err, ErrChildDied) || !strings.Contains(err.Error(), "died again") {
		t.Errorf("crash: %v", err)
	}
	// And the session goes on.
	if r := call(t, ex, "echo", `1`); r.Text != "1" {
		t.Errorf("after crashes echo = %+v", r)
	}
}

func TestExecutorCancel(t *testing.T) {
	needUserns(t)
	ex := startFake(t, runner.Config{Root: t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ex.Exec(ctx, proto.Request{Tool: "hang", Args: json.RawMessage(`{}`)})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	if r := call(t, ex, "echo", `2`); r.Text != "2" {
		t.Errorf("after a cancel echo = %+v", r)
	}
	ex.Close()
	if _, err := ex.Exec(context.Background(), proto.Request{Tool: "echo"}); err == nil {
		t.Error("Exec after Close succeeded")
	}
}

// TestUnprivileged runs TestCheck and the lock tests again as nobody (uid 65534, no groups),
// the way a normal user runs moat. It needs root to switch users.
func TestUnprivileged(t *testing.T) {
	if os.Getenv("MOAT_ISOLATE_UNPRIVILEGED") == "1" {
		t.Skip("already the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to re-run itself as uid 65534; as a normal user TestCheck already is the unprivileged run")
	}
	needUserns(t)
	dir, err := os.MkdirTemp("", "moat-isolate-unpriv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	must(t, os.Chmod(dir, 0o755))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "isolate.test")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	src.Close()
	must(t, dst.Close())
	must(t, err)
	cmd := exec.Command(bin, "-test.run=^(TestCheck|TestLocksWithoutSeccomp|TestKeyringFresh|TestSymlinkEscapeStoppedByIsolationAlone|TestExecutorProtocol)$", "-test.v")
	tmp := filepath.Join(dir, "tmp")
	must(t, os.Mkdir(tmp, 0o777))
	must(t, os.Chmod(tmp, 0o1777))
	cmd.Env = []string{"MOAT_ISOLATE_UNPRIVILEGED=1", "TMPDIR=" + tmp, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid 65534:\n%s", out)
	if err != nil {
		t.Fatalf("unprivileged run failed: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP: TestCheck") {
		t.Skipf("the kernel refuses unprivileged user namespaces here")
	}
	for _, name := range []string{"TestCheck", "TestLocksWithoutSeccomp", "TestKeyringFresh"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("%s did not pass as uid 65534", name)
		}
	}
}

// BenchmarkPipeRoundTrip is the cost the isolation adds to one call: the
// same fake runner in this process and behind the pipe in the child.
func BenchmarkPipeRoundTrip(b *testing.B) {
	req := proto.Request{ID: 1, Tool: "echo", Args: json.RawMessage(`{"path":"src/main.go","offset":1,"limit":200}`)}
	b.Run("in-process", func(b *testing.B) {
		var ex engine.Executor = fakeRunner{}
		for b.Loop() {
			if _, err := ex.Exec(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("isolated", func(b *testing.B) {
		needUserns(b)
		plan, err := hostPlan(runner.Config{Root: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		e := &childExec{h: hello{Plan: plan}}
		defer e.Close()
		if _, err := e.Exec(context.Background(), req); err != nil { // start the child outside the timing
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := e.Exec(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRealRoundTrip is BenchmarkPipeRoundTrip with the real guest
// (host/runner, wazero) on a 2 KB file, in this process and in the
// child: "none" is a tool the guest does not have, answered at once.
//
//	go test ./isolate -run XX -bench RealRoundTrip -count 5
func BenchmarkRealRoundTrip(b *testing.B) {
	needUserns(b)
	root := b.TempDir()
	must(b, os.WriteFile(filepath.Join(root, "notes.md"), []byte(strings.Repeat("A line of notes, about forty bytes long.\n", 50)), 0o644))
	cfg := runner.Config{Root: root, Resolver: confine.Auto, CacheDir: testCache(b)}
	must(b, warmCache(context.Background(), cfg))
	in, err := runner.New(context.Background(), cfg)
	must(b, err)
	defer in.Close()
	plan, err := hostPlan(cfg)
	must(b, err)
	plan.Env = append(plan.Env, "MOAT_TEST_REAL_RUNNER=1")
	iso := &childExec{h: hello{Plan: plan}}
	defer iso.Close()
	for _, tool := range []string{"none", proto.Stat, proto.ReadFile} {
		req := proto.Request{ID: 1, Tool: tool, Args: json.RawMessage(`{"path":"notes.md"}`)}
		for _, ex := range []struct {
			name string
			ex   engine.Executor
		}{{"in-process", in}, {"isolated", iso}} {
			b.Run(tool+"/"+ex.name, func(b *testing.B) {
				if _, err := ex.ex.Exec(context.Background(), req); err != nil { // the child starts outside the timing
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := ex.ex.Exec(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// startReal starts a child running the real runner (host/runner, wazero).
func startReal(t *testing.T, cfg runner.Config) *childExec {
	t.Helper()
	if err := warmCache(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	plan, err := hostPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plan.Env = append(plan.Env, "MOAT_TEST_REAL_RUNNER=1")
	e := newChildExec(plan, cfg.FindingsPath(), cfg.WeightsPath())
	c, err := spawn(context.Background(), e.h)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	t.Cleanup(func() { e.Close() })
	return e
}

func testCache(t testing.TB) string {
	d := filepath.Join(os.TempDir(), "moat-test-cache-isolate")
	must(t, os.MkdirAll(d, 0o755))
	return d
}

// TestRealRunnerIsolated runs the real guest in the child with every
// resolver, the unconfined one included: the links to the secret outside
// cannot be followed because the outside is not mounted.
func TestRealRunnerIsolated(t *testing.T) {
	needUserns(t)
	root, _, secret := sandboxWithEscapes(t)
	for _, kind := range []confine.Kind{confine.Unconfined, confine.Auto} {
		t.Run(kind.String(), func(t *testing.T) {
			ex := startReal(t, runner.Config{Root: root, Resolver: kind, CacheDir: testCache(t)})
			for _, link := range []string{"abs-link", "rel-link", "etc-link"} {
				r := call(t, ex, proto.ReadFile, `{"path":"`+link+`"}`)
				if !r.IsError || strings.Contains(r.Text, secret) {
					t.Errorf("read_file %s: %+v", link, r)
				}
			}
			r := call(t, ex, proto.ReadFile, `{"path":"inside.txt"}`)
			if r.IsError || !strings.Contains(r.Text, "inside") {
				t.Errorf("read_file inside.txt: %+v", r)
			}
			r = call(t, ex, proto.Grep, `{"pattern":"moat-outside-secret"}`)
			if strings.Contains(r.Text, "secret.txt") {
				t.Errorf("grep followed a link out: %+v", r)
			}
			// From outside: the process running the tools has its own
			// mount and network namespaces and sees only the sandbox.
			pid := ex.pid()
			for _, ns := range []string{"mnt", "net"} {
				mine, _ := os.Readlink("/proc/self/ns/" + ns)
				its, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
				if err != nil || mine == its {
					t.Errorf("tool process %d shares %s namespace (%v)", pid, ns, err)
				}
			}
			ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/root", pid))
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if err != nil || strings.Join(names, ",") != "cache,sandbox" {
				t.Errorf("tool process's / holds %v (%v)", names, err)
			}
		})
	}
}

// TestFindingsCacheIsolated: the parent keeps the findings cache for
// the child, which never touches it. What the child found in a first
// session is written when the session closes; a second session's child
// gets it with its first call, and so does a child restarted in it, and
// neither finds in a file again: the cache is not written again (the
// same file, not one renamed over it). The root is Go's own errors
// package, whose files are long settled (the racy rule remembers
// nothing written in the last 2 s).
func TestFindingsCacheIsolated(t *testing.T) {
	needUserns(t)
	root := filepath.Join(runtime.GOROOT(), "src", "errors")
	cfg := runner.Config{Root: root, CacheDir: testCache(t)}
	cfg.Findings = runner.FindingsName(cfg)
	path := cfg.FindingsPath()
	if path == "" {
		t.Skip("no build ID to key the findings cache by")
	}
	os.Remove(path) // a run before this one's
	grep := func(ex *childExec) {
		if r := call(t, ex, proto.Grep, `{"pattern":"zzqqxx_nohit","output_mode":"count"}`); r.IsError {
			t.Fatalf("grep: %+v", r)
		}
	}
	// A session that only reads one file neither reads nor writes it.
	once := startReal(t, cfg)
	if r := call(t, once, proto.ReadFile, `{"path":"errors.go"}`); r.IsError {
		t.Fatalf("read_file: %+v", r)
	}
	must(t, once.Close())
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a session of one read_file wrote the findings cache (%v)", err)
	}
	first := startReal(t, cfg)
	grep(first)
	must(t, first.Close())
	fd, err := confine.LoadCache(path)
	if err != nil || fd.Len() == 0 {
		t.Fatalf("the first session kept %d files' findings (%v)", fd.Len(), err)
	}
	before, err := os.Stat(path)
	must(t, err)
	second := startReal(t, cfg)
	grep(second)
	syscall.Kill(second.pid(), syscall.SIGKILL)
	grep(second) // in a new child
	must(t, second.Close())
	after, err := os.Stat(path)
	must(t, err)
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("the second session found in files again: the cache was written again")
	}
}

// TestWeightsKept: where a grep's work lay outlives the process. The
// parent keeps the weights file for the isolated child (which has none of
// its own): what the child's splitter learned is written when the
// session closes; the next session's child gets it with its first call
// that walks the tree, and so does a child restarted in it. Without
// isolation the session keeps the file itself, and its splitter starts
// with what the file holds. The answer is the same every time. The root
// is Go's regexp package, heavier than the least weight a share reports.
func TestWeightsKept(t *testing.T) {
	needUserns(t)
	root := filepath.Join(runtime.GOROOT(), "src", "regexp")
	cfg := runner.Config{Root: root, CacheDir: testCache(t)}
	cfg.Weights = runner.WeightsName(cfg)
	path := cfg.WeightsPath()
	os.Remove(path) // a run before this one's
	var answer string
	grep := func(ex engine.Executor) {
		t.Helper()
		r := call(t, ex, proto.Grep, `{"pattern":"Compile","output_mode":"count"}`)
		if r.IsError || answer != "" && r.Text != answer {
			t.Fatalf("grep: %+v, want %q", r, answer)
		}
		answer = r.Text
	}
	first := startReal(t, cfg)
	grep(first)
	must(t, first.Close())
	kept := fanout.LoadWeights(path)
	if !slices.ContainsFunc(kept, func(w proto.FolderWeight) bool { return w.Path == "." && w.Bytes > 0 }) {
		t.Fatalf("the first session kept %v", kept)
	}
	before, err := os.Stat(path)
	must(t, err)
	second := startReal(t, cfg)
	grep(second)
	if !second.c.weighed {
		t.Error("the second session's child was not given the weights")
	}
	syscall.Kill(second.pid(), syscall.SIGKILL)
	grep(second) // in a new child
	if !second.c.weighed {
		t.Error("a restarted child was not given the weights")
	}
	must(t, second.Close())
	after, err := os.Stat(path)
	must(t, err)
	if !os.SameFile(before, after) {
		t.Error("the second session learned nothing new, and wrote the file again")
	}

	os.Remove(path)
	l, err := newRunner(context.Background(), cfg)
	must(t, err)
	grep(l)
	must(t, l.Close())
	if got := fanout.LoadWeights(path); len(got) == 0 {
		t.Fatal("a session without isolation kept no weights")
	}
	again, err := newRunner(context.Background(), cfg)
	must(t, err)
	defer again.Close()
	if ws, lessons := again.(local).Weights(); len(ws) == 0 || lessons != 0 {
		t.Fatalf("a new session's splitter starts with %d folders (taught by %d greps), want the file's", len(ws), lessons)
	}
}

func TestStartModes(t *testing.T) {
	needUserns(t)
	cfg := runner.Config{Root: t.TempDir(), CacheDir: testCache(t)}
	ex, err := Start(context.Background(), Require, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ex.(*childExec); !ok {
		t.Errorf("require gave %T, want the isolated executor", ex)
	}
	ex.Close()
	ex, err = Start(context.Background(), Off, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ex.(*childExec); ok {
		t.Error("off gave the isolated executor")
	}
	ex.Close()
}

// TestUnavailableModes makes namespaces unavailable for real, by running
// this test binary in a user namespace whose user.max_user_namespaces is 0,
// and checks require refuses with the reason and auto says it once.
func TestUnavailableModes(t *testing.T) {
	if os.Getenv("MOAT_ISOLATE_BLOCKED") == "1" {
		cfg := runner.Config{Root: t.TempDir(), CacheDir: testCache(t)}
		_, err := Start(context.Background(), Require, cfg, io.Discard)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "user.max_user_namespaces=0") {
			t.Fatalf("require: %v", err)
		}
		var notes strings.Builder
		ex, err := Start(context.Background(), Auto, cfg, &notes)
		if err != nil {
			t.Fatal(err)
		}
		defer ex.Close()
		if _, ok := ex.(*childExec); ok {
			t.Error("auto gave the isolated executor")
		}
		if n := strings.Count(notes.String(), "OS isolation unavailable"); n != 1 || !strings.Contains(notes.String(), "--isolate require") {
			t.Errorf("auto's notice: %q", notes.String())
		}
		return
	}
	needUserns(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1) to block namespaces")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--user", "--map-root-user", "sh", "-c",
		`echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -test.run='^TestUnavailableModes$' -test.v`, exe)
	cmd.Env = append(os.Environ(), "MOAT_ISOLATE_BLOCKED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("blocked run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestUnavailableModes") {
		t.Errorf("blocked run did not pass:\n%s", out)
	}
}

// TestNoInheritedDescriptors opens a file outside the root without
// close-on-exec, as a shell's `exec 7<~/.ssh/id_rsa` leaves one for moat,
// and shows the sandbox child does not hold it.
func TestNoInheritedDescriptors(t *testing.T) {
	needUserns(t)
	root, secretPath, _ := sandboxWithEscapes(t)
	fd, err := unix.Open(secretPath, unix.O_RDONLY, 0) // no O_CLOEXEC: inherited through exec
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	rep, err := check(context.Background(), runner.Config{Root: root, Resolver: confine.Unconfined}, probeSpec{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rep.FDs {
		if strings.HasSuffix(d, " -> "+secretPath) {
			t.Errorf("the sandbox child holds descriptor %s, opened outside its root by its parent", d)
		} else if _, target, _ := strings.Cut(d, " -> "); strings.HasPrefix(target, "/") {
			t.Errorf("the sandbox child holds descriptor %s, a host file (only its runtime's epoll and eventfd are expected)", d)
		}
	}
	t.Logf("child's descriptors above stderr: %v", rep.FDs)
}

// TestTwoRootsIsolated runs the real guest in the child over two roots,
// each bound read-only at /sandbox/LABEL: both are seen and read, a
// link from one root into the other and links out of both are refused,
// and the child's / holds only the sandbox and the cache. With the
// confined filesystem switched off the outside stays out of reach (not
// mounted), but a relative link from one root into the other is the
// confined filesystem's to refuse: the child sees every root.
func TestTwoRootsIsolated(t *testing.T) {
	needUserns(t)
	root, secretPath, secret := sandboxWithEscapes(t)
	other := filepath.Join(filepath.Dir(root), "other")
	must(t, os.Mkdir(other, 0o755))
	must(t, os.WriteFile(filepath.Join(other, "x.txt"), []byte("other root"), 0o644))
	must(t, os.Symlink("../other/x.txt", filepath.Join(root, "cross-rel")))
	must(t, os.Symlink(filepath.Join(other, "x.txt"), filepath.Join(root, "cross-abs")))
	must(t, os.Symlink(secretPath, filepath.Join(other, "abs-link")))
	roots := []confine.Dir{{Label: "root", Path: root}, {Label: "other", Path: other}}
	for _, kind := range []confine.Kind{confine.Unconfined, confine.Auto} {
		t.Run(kind.String(), func(t *testing.T) {
			ex := startReal(t, runner.Config{Roots: roots, Resolver: kind, CacheDir: testCache(t)})
			refused := []string{"root/abs-link", "root/rel-link", "root/etc-link", "other/abs-link", "root/cross-abs"}
			if kind != confine.Unconfined {
				refused = append(refused, "root/cross-rel")
			}
			for _, p := range refused {
				r := call(t, ex, proto.ReadFile, `{"path":"`+p+`"}`)
				if !r.IsError || strings.Contains(r.Text, secret) || strings.Contains(r.Text, "other root") {
					t.Errorf("read_file %s: %+v", p, r)
				}
			}
			for p, want := range map[string]string{"root/inside.txt": "inside", "other/x.txt": "other root"} {
				if r := call(t, ex, proto.ReadFile, `{"path":"`+p+`"}`); r.IsError || !strings.Contains(r.Text, want) {
					t.Errorf("read_file %s: %+v", p, r)
				}
			}
			if r := call(t, ex, proto.ListDir, `{"path":"."}`); r.Text != "other/\nroot/" {
				t.Errorf("list_dir . = %q", r.Text)
			}
			if r := call(t, ex, proto.Grep, `{"pattern":"moat-outside-secret|other root"}`); strings.Contains(r.Text, secret) || !strings.Contains(r.Text, "other/x.txt") {
				t.Errorf("grep over both roots: %+v", r)
			}
			pid := ex.pid()
			for dir, want := range map[string]string{"": "cache,sandbox", "sandbox": "other,root"} {
				ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/root/%s", pid, dir))
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				if err != nil || strings.Join(names, ",") != want {
					t.Errorf("tool process's /%s holds %v (%v), want %s", dir, names, err, want)
				}
			}
		})
	}
}
