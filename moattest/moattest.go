// Package moattest runs moat recordings in another project's go test,
// through testscript (github.com/rogpeppe/go-internal/testscript).
//
// A recording made with 'moat ask --record FILE.txtar' (or moat chat) is
// itself a testscript: its comment ends with the line "replay", which
// replays it. So a folder of recordings is a test suite:
//
//	func TestRecordings(t *testing.T) {
//		testscript.Run(t, moattest.Params(t, "testdata/recordings"))
//	}
//
// Params builds the moat command from the module this test depends on and
// puts it on the scripts' PATH, and gives the scripts these commands:
//
//	replay [--root DIR] [FILE.txtar]   replay a recording (default: this script);
//	                                   a relative DIR is the script's own folder
//	                                   in $WORK, else DIR in the test's folder
//	                                   (go test's working directory)
//	fakellm SCRIPT.json                start the fake model server (OLLAMA_HOST
//	                                   and FAKELLM point at it)
//	llmsent [N]                        print the chat requests the fake got
//	                                   (or the Nth), one "PATH BODY" line each
//	llmcount N                         the fake got exactly N chat requests
//
// Scripts can also run moat itself ("exec moat ask --record ..."), against
// the fake model server fakellm starts.
//
// A recording is data, not code: a script in dir that holds
// moat/session.json is a recording, and its own script may hold only
// comments, blank lines and the line "replay" (or "replay --root DIR",
// DIR a relative path inside the script's work folder); one with any other line
// (an exec, any other command) fails before anything of it runs, so a
// recording from someone else runs moat's replay and nothing else. A
// script in dir that is not a recording is a testscript like any other:
// code, to be read before it is committed.
package moattest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/moatdev/moat/host/scripted"
)

// Params are testscript parameters for the scripts (and recordings) in
// dir: moat on the PATH, Commands, and no model server reachable unless
// a script starts the fake one.
func Params(t testing.TB, dir string) testscript.Params {
	bin := Build(t)
	cache := t.TempDir() // the compiled guest, shared by the scripts of this test
	return testscript.Params{
		Dir:  dir,
		Cmds: Commands(),
		Setup: func(env *testscript.Env) error {
			if err := recordingIsData(dir, env.WorkDir); err != nil {
				return err
			}
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			if abs, err := filepath.Abs(dir); err == nil {
				env.Setenv(scriptsVar, abs) // so that replay names a script's own file
			}
			env.Setenv("MOAT_CACHE_DIR", cache)
			env.Setenv("OLLAMA_HOST", "http://127.0.0.1:9") // nothing listens there
			return nil
		},
	}
}

// Build builds the moat command of the moat module this test's module
// requires (go build github.com/moatdev/moat/cmd/moat) into a temporary
// folder and returns the binary's path. $MOAT_BINARY, when set, is used
// instead.
func Build(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MOAT_BINARY"); p != "" {
		return p
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("moattest: building moat needs the go command: %v", err)
	}
	out := filepath.Join(t.TempDir(), "moat")
	cmd := exec.Command(gobin, "build", "-o", out, "github.com/moatdev/moat/cmd/moat")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("moattest: go build github.com/moatdev/moat/cmd/moat: %v\n%s(the module needs moat's command in go.sum: go get -tool github.com/moatdev/moat/cmd/moat)", err, b)
	}
	return out
}

// Commands are the testscript commands described in the package comment.
// The moat they run is the one on the script's PATH.
func Commands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	var servers sync.Map // *testscript.TestScript -> *scripted.Server
	server := func(ts *testscript.TestScript, cmd string) *scripted.Server {
		s, ok := servers.Load(ts)
		if !ok {
			ts.Fatalf("%s: no fake server: run fakellm first", cmd)
		}
		return s.(*scripted.Server)
	}
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"replay": cmdReplay,
		"fakellm": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: fakellm SCRIPT.json")
			}
			sc, err := scripted.ParseScript([]byte(ts.ReadFile(args[0])))
			ts.Check(err)
			srv := scripted.Start(sc)
			if _, loaded := servers.LoadOrStore(ts, srv); loaded {
				srv.Close()
				ts.Fatalf("fakellm: a server is already running in this script")
			}
			ts.Defer(func() {
				servers.Delete(ts)
				srv.Close()
			})
			ts.Setenv("OLLAMA_HOST", srv.URL)
			ts.Setenv("FAKELLM", srv.URL)
		},
		"llmsent": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) > 1 {
				ts.Fatalf("usage: llmsent [N]")
			}
			reqs := server(ts, "llmsent").ChatRequests()
			if len(args) == 1 {
				n, err := strconv.Atoi(args[0])
				if err != nil || n < 1 || n > len(reqs) {
					ts.Fatalf("llmsent: want a request number from 1 to %d, got %q", len(reqs), args[0])
				}
				reqs = reqs[n-1 : n]
			}
			for _, r := range reqs {
				var b bytes.Buffer
				if err := json.Compact(&b, r.Body); err != nil {
					b.Reset()
					b.Write(r.Body)
				}
				fmt.Fprintf(ts.Stdout(), "%s %s\n", r.Path, b.String())
			}
		},
		"llmcount": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: llmcount N")
			}
			want, err := strconv.Atoi(args[0])
			ts.Check(err)
			if got := len(server(ts, "llmcount").ChatRequests()); got != want {
				ts.Fatalf("the fake server got %d chat requests, want %d", got, want)
			}
		},
	}
}

// scriptsVar is the scripts' folder (Params' dir), absolute, in the
// scripts' environment.
const scriptsVar = "MOATTEST_SCRIPTS"

// cmdReplay runs moat replay. With no FILE, the recording is the script
// itself: testscript extracted its files (moat/..., root/...) into $WORK,
// and they are packed again into the archive they came from (or, when
// they are still as the script's file has them, that file is replayed).
//
// A relative --root DIR is a folder the script made in $WORK when there
// is one, and otherwise DIR in the folder the test runs in (go test's
// working directory, the package's folder: testdata/tree there).
func cmdReplay(ts *testscript.TestScript, neg bool, args []string) {
	var flags, files []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--root" || a == "-root":
			if i+1 == len(args) {
				ts.Fatalf("usage: replay [--root DIR] [--update] [FILE.txtar]")
			}
			flags = append(flags, "--root", replayRoot(ts, args[i+1]))
			i++
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
		default:
			files = append(files, ts.MkAbs(a))
		}
	}
	name := "" // the recording's own file, as the hint names it
	switch len(files) {
	case 0:
		own := scriptFile(ts)
		for _, f := range flags {
			if f == "--update" || f == "-update" {
				if own != "" {
					ts.Fatalf("replay --update rewrites a recording's file; run moat replay --update %s", own)
				}
				ts.Fatalf("replay --update rewrites a recording's file; name it (replay --update FILE.txtar), or run moat replay --update on it")
			}
		}
		files = []string{packWork(ts, own)}
		name = own
	case 1:
		name = files[0]
	default:
		ts.Fatalf("usage: replay [--root DIR] [--update] [FILE.txtar]")
	}
	if name == "" {
		name = "FILE"
	}
	err := ts.Exec("moat", append(append([]string{"replay"}, flags...), files[0])...)
	var exit *exec.ExitError
	switch {
	case err == nil && neg:
		ts.Fatalf("the replay was the same as the recording; want a difference")
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		// A wrong command line compared nothing: say so, even under !.
		ts.Fatalf("replay: moat replay refused its command line (exit status 2; its message is above): %s", strings.Join(args, " "))
	case neg && errors.As(err, &exit) && exit.ExitCode() == 1 && differs(ts):
	case errors.As(err, &exit) && exit.ExitCode() == 1 && differs(ts):
		ts.Fatalf("the replay differs from the recording (the differences are above); 'moat replay --update %s' accepts them", name)
	default:
		ts.Fatalf("replay: moat replay failed before it compared anything (its message is above): %v", err)
	}
}

// differs reports whether the last moat replay found differences (its
// last line says how many), rather than failing to replay at all.
func differs(ts *testscript.TestScript) bool {
	return strings.Contains(ts.ReadFile("stderr"), " difference(s)")
}

// replayRoot resolves a --root: as given when absolute; else a folder in
// $WORK (the script's own), else one in the test's folder. A folder in
// neither is a failure that names both places.
func replayRoot(ts *testscript.TestScript, dir string) string {
	if filepath.IsAbs(dir) {
		return dir
	}
	inWork := ts.MkAbs(dir)
	if st, err := os.Stat(inWork); err == nil && st.IsDir() {
		return inWork
	}
	wd, err := os.Getwd()
	if err == nil {
		inTest := filepath.Join(wd, dir)
		if st, err := os.Stat(inTest); err == nil && st.IsDir() {
			return inTest
		}
		ts.Fatalf("replay: --root %s: no such folder in the script's $WORK (%s) nor in the test's folder (%s): a relative --root names one of those", dir, inWork, inTest)
	}
	ts.Fatalf("replay: --root %s: no such folder in the script's $WORK (%s)", dir, inWork)
	return ""
}

// scriptFile is the file of the script running, when Params set the
// scripts' folder: "" when it cannot tell.
func scriptFile(ts *testscript.TestScript) string {
	dir := ts.Getenv(scriptsVar)
	if dir == "" {
		return ""
	}
	for _, ext := range []string{".txtar", ".txt"} {
		p := filepath.Join(dir, ts.Name()+ext)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// recordingIsData refuses to run a recording whose script holds anything
// but comments, blank lines and "replay". The script is found by its
// name, which testscript gives its work folder ("script-NAME").
func recordingIsData(dir, workDir string) error {
	name := strings.TrimPrefix(filepath.Base(workDir), "script-")
	var (
		a    *txtar.Archive
		file string
	)
	for _, ext := range []string{".txtar", ".txt"} {
		file = filepath.Join(dir, name+ext)
		if _, err := os.Stat(file); err == nil {
			var perr error
			if a, perr = txtar.ParseFile(file); perr != nil {
				return fmt.Errorf("moattest: %v", perr)
			}
			break
		}
	}
	if a == nil {
		return fmt.Errorf("moattest: cannot find the script %s in %s to check whether it is a recording", name, dir)
	}
	isRecording := false
	for _, f := range a.Files {
		if f.Name == "moat/session.json" {
			isRecording = true
		}
	}
	if !isRecording {
		return nil
	}
	for i, line := range strings.Split(string(a.Comment), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || t == "replay" || replayInWork(t) {
			continue
		}
		return fmt.Errorf("moattest: %s is a moat recording (it holds moat/session.json), and a recording is data: its script may hold only comments and the line \"replay\" (or \"replay --root DIR\", DIR inside the script's work folder), but line %d is %q; nothing of it was run", file, i+1, t)
	}
	return nil
}

// replayInWork reports whether line is "replay --root DIR" with DIR a
// plain relative path (no "..", not absolute, no variable), which the
// replay command resolves in the script's work folder or the test's, the form a recording made without
// --record-files is given.
func replayInWork(line string) bool {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "replay" || f[1] != "--root" {
		return false
	}
	d := f[2]
	if filepath.IsAbs(d) || strings.ContainsAny(d, "$'\"\\") {
		return false
	}
	c := filepath.ToSlash(filepath.Clean(d))
	return c != ".." && !strings.HasPrefix(c, "../")
}

// packWork rebuilds the recording this script is from the files
// testscript extracted: everything under moat/ and root/. When they are
// exactly the recording in the script's own file (own), that file is
// replayed itself, so that moat names it.
func packWork(ts *testscript.TestScript, own string) string {
	work := ts.MkAbs(".")
	a := &txtar.Archive{}
	for _, top := range []string{"moat", "root"} {
		err := filepath.WalkDir(filepath.Join(work, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(work, p)
			a.Files = append(a.Files, txtar.File{Name: filepath.ToSlash(rel), Data: data})
			return nil
		})
		if err != nil && !(top == "root" && os.IsNotExist(err)) {
			ts.Fatalf("replay: this script is not a moat recording (no %s/ folder): %v", top, err)
		}
	}
	if !bytes.Contains(txtar.Format(a), []byte("-- moat/session.json --")) {
		ts.Fatalf("replay: this script is not a moat recording: no moat/session.json")
	}
	if own != "" && sameRecording(own, a) {
		return own
	}
	out := filepath.Join(ts.MkAbs("."), ".moat-recording.txtar")
	if err := os.WriteFile(out, txtar.Format(a), 0o644); err != nil {
		ts.Fatalf("replay: %v", err)
	}
	return out
}

// sameRecording reports whether the file own holds exactly the files of
// a under moat/ and root/ (the rest of a script's file is not the
// recording's).
func sameRecording(own string, a *txtar.Archive) bool {
	f, err := txtar.ParseFile(own)
	if err != nil {
		return false
	}
	want := map[string]string{}
	for _, x := range a.Files {
		want[x.Name] = string(x.Data)
	}
	n := 0
	for _, x := range f.Files {
		if !strings.HasPrefix(x.Name, "moat/") && !strings.HasPrefix(x.Name, "root/") {
			continue
		}
		if d, ok := want[x.Name]; !ok || d != string(x.Data) {
			return false
		}
		n++
	}
	return n == len(want)
}
