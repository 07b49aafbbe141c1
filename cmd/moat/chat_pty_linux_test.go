package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/host/scripted"
)

// openPty opens a pseudo-terminal pair: the test types on master, moat
// reads from and draws on the slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the pty: %v", err)
	}
	return m, s
}

// setWinsize gives the pty 24 rows of the given width, through
// SyscallConn: slave.Fd() would put it in blocking mode, which moat itself
// must never do (TestTerminalChecksKeepNonblocking).
func setWinsize(slave *os.File, width int) error {
	rc, err := slave.SyscallConn()
	if err != nil {
		return err
	}
	if cerr := rc.Control(func(fd uintptr) {
		err = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(width)})
	}); cerr != nil {
		return cerr
	}
	return err
}

// ptyChat runs moat chat in this process on a pseudo-terminal, so keys
// can be typed while the line editor has the terminal in raw mode (a
// testscript's ttyin writes all input before moat starts, when the
// terminal still turns Ctrl-C into a signal and Ctrl-D into end of file).
type ptyChat struct {
	t      *testing.T
	master *os.File
	screen lockedBuffer
	stderr lockedBuffer
	code   chan int
	srv    *scripted.Server
}

func startPtyChat(t *testing.T, script string, flags ...string) *ptyChat {
	return startPty(t, script, 0, false, flags...)
}

// startPty starts moat chat on a pty of the given width (0: the default),
// with stderr on the pty too if stderrTTY.
func startPty(t *testing.T, script string, width int, stderrTTY bool, flags ...string) *ptyChat {
	sc, err := scripted.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.Start(sc)
	t.Cleanup(srv.Close)
	t.Setenv("OLLAMA_HOST", srv.URL)
	t.Setenv("MOAT_ISOLATE", "off")
	t.Setenv("MOAT_CACHE_DIR", sharedCache(t))
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // saved sessions, never the real user's
	master, slave := openPty(t)
	p := &ptyChat{t: t, master: master, code: make(chan int, 1), srv: srv}
	if width > 0 {
		if err := setWinsize(slave, width); err != nil {
			t.Fatal(err)
		}
	}
	var stderr io.Writer = &p.stderr
	if stderrTTY {
		stderr = slave
	}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			p.screen.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		args := append([]string{"chat", "--root", t.TempDir(), "--model", "qwen3", "--writes", "deny"}, flags...)
		p.code <- run(context.Background(), args, slave, slave, stderr)
		slave.Close()
	}()
	t.Cleanup(func() { master.Close() })
	return p
}

// waitPrompts waits until the screen shows the prompt n times in all.
func (p *ptyChat) waitPrompts(n int) {
	p.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); strings.Count(p.screen.String(), "moat> ") < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("prompt %d never came; screen %q, stderr %q", n, p.screen.String(), p.stderr.String())
		}
	}
	// The prompt is drawn before raw mode is certain to be on; give the
	// editor a moment to be reading.
	time.Sleep(50 * time.Millisecond)
}

// endsWith waits a little for the screen to end with suffix (moat may have
// exited before the last bytes reached the test's reader).
func (p *ptyChat) endsWith(suffix string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.HasSuffix(p.screen.String(), suffix) {
			return true
		}
	}
	return false
}

func (p *ptyChat) typeKeys(s string) {
	p.t.Helper()
	if _, err := p.master.WriteString(s); err != nil {
		p.t.Fatal(err)
	}
}

func (p *ptyChat) exit() int {
	p.t.Helper()
	select {
	case c := <-p.code:
		return c
	case <-time.After(20 * time.Second):
		p.t.Fatalf("moat chat did not end; screen %q, stderr %q", p.screen.String(), p.stderr.String())
	}
	return -1
}

// Ctrl-C with a half-typed line clears the line and the session goes on;
// Ctrl-C at an empty prompt leaves, on a new line.
func TestChatKeysCtrlC(t *testing.T) {
	p := startPtyChat(t, `{"turns":[{"text":"One."}]}`)
	p.waitPrompts(1)
	p.typeKeys("half-typed")
	p.typeKeys("\x03")
	p.typeKeys("First\r")
	p.waitPrompts(2)
	p.typeKeys("\x03")
	if c := p.exit(); c != exitOK {
		t.Errorf("exit status %d, want 0", c)
	}
	reqs := p.srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d chat requests, want 1", len(reqs))
	}
	if body := string(reqs[0].Body); !strings.Contains(body, `"content":"First"`) || strings.Contains(body, "half-typed") {
		t.Errorf("the question sent was not the line typed after Ctrl-C: %s", body)
	}
	if !p.endsWith("moat> \r\n") {
		t.Errorf("the session did not end on a new line after the prompt: %q", p.screen.String())
	}
	if !strings.Contains(p.screen.String(), "First\r\nOne.\r\n") {
		t.Errorf("the reply is not on the screen: %q", p.screen.String())
	}
}

// Ctrl-D leaves, on a new line; with text typed it does not.
func TestChatKeysCtrlD(t *testing.T) {
	p := startPtyChat(t, `{"turns":[]}`)
	p.waitPrompts(1)
	p.typeKeys("abc\x04")
	time.Sleep(100 * time.Millisecond)
	select {
	case c := <-p.code:
		t.Fatalf("Ctrl-D with text typed ended the session (status %d)", c)
	default:
	}
	p.typeKeys("\x03") // clear the line
	p.typeKeys("\x04")
	if c := p.exit(); c != exitOK {
		t.Errorf("exit status %d, want 0", c)
	}
	if !p.endsWith("abc\x1b[3D   \x1b[3D\r\n") { // the line cleared, then a new line
		t.Errorf("the session did not end on a new line after the prompt: %q", p.screen.String())
	}
	if n := len(p.srv.ChatRequests()); n != 0 {
		t.Errorf("%d chat requests, want none", n)
	}
}

// On a terminal, a reply is wrapped at spaces to the window's width, and
// while the model loads a line on stderr counts the seconds; it is erased
// before the reply is written.
func TestChatKeysWrapAndWaiting(t *testing.T) {
	p := startPty(t, `{"turns":[{"text":"The quick brown fox jumps over the lazy dog.","delay_ms":1500}]}`, 24, true)
	p.waitPrompts(1)
	p.typeKeys("Go\r")
	p.waitPrompts(2)
	p.typeKeys("\x04")
	if c := p.exit(); c != exitOK {
		t.Errorf("exit status %d, want 0", c)
	}
	screen := p.screen.String()
	if !strings.Contains(screen, "waiting for qwen3… 0s") {
		t.Errorf("no waiting line on the screen: %q", screen)
	}
	if !strings.Contains(screen, "s\r\x1b[KThe quick brown fox\r\njumps over the lazy dog.\r\nmoat> ") {
		t.Errorf("the waiting line was not erased before the reply, or the reply was not wrapped at 24 columns: %q", screen)
	}
}

// Ctrl-C at the approval question stops the reply, and the next line typed
// at the prompt is the next question: the question's reader, on its own
// descriptor of the terminal, must not be left to take it. The gate asks on
// /dev/tty, so moat runs as a child whose controlling terminal is the pty.
func TestChatCtrlCAtApproval(t *testing.T) {
	srv := scripted.Start(scripted.Script{Turns: []scripted.Turn{
		{Calls: []scripted.Call{{Name: "propose_write", Args: []byte(`{"path":"new.txt","content":"hello\n"}`)}}},
		{Text: "Two."},
	}})
	t.Cleanup(srv.Close)
	p := startPtyChild(t, srv, "chat", "--root", t.TempDir(), "--model", "qwen3")
	p.waitPrompts(1)
	p.typeKeys("Write it\r")
	p.waitScreen("[y]es")
	p.typeKeys("\x03")
	p.waitScreen("reply stopped")
	p.waitPrompts(2)
	p.typeKeys("Second\r")
	p.waitPrompts(3)
	p.typeKeys("\x04")
	if c := p.exit(); c != exitOK {
		t.Errorf("exit status %d, want 0; screen %q", c, p.screen.String())
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), `"content":"Second"`) {
		t.Errorf("the line typed after Ctrl-C at the question was not the next question (%d requests); screen %q", len(reqs), p.screen.String())
	}
	if !strings.Contains(p.screen.String(), "Two.") {
		t.Errorf("no reply to the second question: %q", p.screen.String())
	}
}

// startPtyChild runs moat (this test binary under that name) as a child
// whose controlling terminal is a pty, so that /dev/tty is the pty and a
// Ctrl-C typed there is a SIGINT to moat alone.
func startPtyChild(t *testing.T, srv *scripted.Server, args ...string) *ptyChat {
	t.Helper()
	return startOnPty(t, srv, os.Environ(), 80, args...) // wide enough that replies are wrapped
}

// startOnPty runs moat (this test binary under that name) with a pty as
// its controlling terminal, stdin, stdout and stderr, as a person runs
// it, in env (and the settings every pty test needs), talking to srv
// when there is one. width, when not 0, is the pty's width.
func startOnPty(t *testing.T, srv *scripted.Server, env []string, width int, args ...string) *ptyChat {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, bin+"/moat"); err != nil { // testscript.Main runs "moat" by that name
		t.Fatal(err)
	}
	master, slave := openPty(t)
	t.Cleanup(func() { master.Close() })
	if width > 0 {
		if err := setWinsize(slave, width); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin+"/moat", args...)
	cmd.Env = append(env, "MOAT_ISOLATE=off", "MOAT_CACHE_DIR="+sharedCache(t), "TERM=dumb",
		"XDG_STATE_HOME="+t.TempDir()) // saved sessions, never the real user's
	if srv != nil {
		cmd.Env = append(cmd.Env, "OLLAMA_HOST="+srv.URL)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	p := &ptyChat{t: t, master: master, code: make(chan int, 1), srv: srv}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			p.screen.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		p.code <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
}

// Ctrl-C during a streamed reply: nothing of the reply is printed after
// it, not even the word the wrapper was holding back until it was whole
// ("t" of "Hi t", the first chunk), in chat (which goes on) and in ask.
func TestCtrlCPrintsNothingMoreOfTheReply(t *testing.T) {
	// afterCtrlC is what the screen shows from the terminal's ^C, echoed
	// when the signal is sent, to the message saying the reply stopped.
	afterCtrlC := func(p *ptyChat, stopped string) string {
		t.Helper()
		screen := p.screen.String()
		i, j := strings.LastIndex(screen, "^C"), strings.Index(screen, stopped)
		if i < 0 || j < i || !strings.Contains(screen[:i], "Hi") {
			t.Fatalf("no reply, then ^C, before %q on the screen: %q", stopped, screen)
		}
		return screen[i+len("^C") : j]
	}
	t.Run("chat", func(t *testing.T) {
		srv := scripted.Start(scripted.Script{Turns: []scripted.Turn{{Text: "Hi there, partial answer", Fail: "hang"}, {Text: "Two."}}})
		t.Cleanup(srv.Close)
		p := startPtyChild(t, srv, "chat", "--root", t.TempDir(), "--model", "qwen3", "--writes", "deny")
		p.waitPrompts(1)
		p.typeKeys("Go\r")
		p.waitScreen("Hi")
		p.typeKeys("\x03")
		p.waitScreen("reply stopped")
		if rest := afterCtrlC(p, "moat: reply stopped"); strings.TrimSpace(rest) != "" {
			t.Errorf("after Ctrl-C the reply went on with %q; screen %q", rest, p.screen.String())
		}
		p.waitPrompts(2)
		p.typeKeys("Second\r")
		p.waitPrompts(3)
		p.typeKeys("\x04")
		if c := p.exit(); c != exitOK {
			t.Errorf("exit status %d, want 0; screen %q", c, p.screen.String())
		}
		if !strings.Contains(p.screen.String(), "Two.") {
			t.Errorf("the next reply was not printed: %q", p.screen.String())
		}
	})
	t.Run("ask", func(t *testing.T) {
		srv := scripted.Start(scripted.Script{Turns: []scripted.Turn{{Text: "Hi there, partial answer", Fail: "hang"}}})
		t.Cleanup(srv.Close)
		p := startPtyChild(t, srv, "ask", "--root", t.TempDir(), "--model", "qwen3", "--writes", "deny", "Go")
		p.waitScreen("Hi")
		p.typeKeys("\x03")
		if c := p.exit(); c != exitInterrupt {
			t.Errorf("exit status %d, want %d; screen %q", c, exitInterrupt, p.screen.String())
		}
		p.waitScreen("moat: interrupted")
		if rest := afterCtrlC(p, "moat: interrupted"); strings.TrimSpace(rest) != "" {
			t.Errorf("after Ctrl-C the reply went on with %q; screen %q", rest, p.screen.String())
		}
	})
}

// waitCount waits until the screen shows s n times.
func (p *ptyChat) waitCount(s string, n int) {
	p.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); strings.Count(p.screen.String(), s) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("%q never came %d times; screen %q", s, n, p.screen.String())
		}
	}
	time.Sleep(50 * time.Millisecond) // the editor is reading after it drew the prompt
}

// waitScreen waits until the screen shows s.
func (p *ptyChat) waitScreen(s string) {
	p.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(p.screen.String(), s); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("%q never came; screen %q", s, p.screen.String())
		}
	}
	time.Sleep(50 * time.Millisecond)
}

// At --max-turns, chat asks whether to go on; yes runs the calls the model
// made in its last reply and gives it as many turns again; no keeps what
// was found and returns to the prompt.
func TestChatAsksToContinueAtTheTurnCap(t *testing.T) {
	p := startPtyChat(t, `{"turns":[
		{"calls":[{"name":"list_dir","args":{"path":"."}}]},
		{"calls":[{"name":"stat","args":{"path":"."}}]},
		{"text":"Found it."},
		{"calls":[{"name":"list_dir","args":{"path":"."}}]}
	]}`, "--max-turns", "1")
	const q = "1 more? [y/N] "
	p.waitPrompts(1)
	p.typeKeys("Look\r")
	p.waitCount(q, 1)
	p.typeKeys("y\r")
	p.waitCount(q, 2)
	p.typeKeys("y\r")
	p.waitPrompts(2)
	p.typeKeys("Again\r")
	p.waitCount(q, 3)
	p.typeKeys("n\r")
	p.waitPrompts(3)
	p.typeKeys("\x04")
	if c := p.exit(); c != exitOK {
		t.Errorf("exit status %d, want 0", c)
	}
	reqs := p.srv.ChatRequests()
	if len(reqs) != 4 {
		t.Fatalf("%d chat requests, want 4; screen %q", len(reqs), p.screen.String())
	}
	// The continuation carries the result of the call made at the cap.
	if b := string(reqs[1].Body); !strings.Contains(b, `"role":"tool"`) || strings.Count(b, `"role":"user"`) != 1 {
		t.Errorf("the continuation did not run the pending call, or asked anew: %s", b)
	}
	if !strings.Contains(p.screen.String(), "Found it.") {
		t.Errorf("no answer after continuing: %q", p.screen.String())
	}
	// The window in use is shown at the start (the fake's model reports none).
	if !strings.Contains(p.stderr.String(), "\ncontext window 8192 tokens (moat's default; --num-ctx or OLLAMA_CONTEXT_LENGTH sets another)\n") {
		t.Errorf("no context window at the start: %q", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "moat: stopped; what it found stays in the conversation") {
		t.Errorf("no word on stopping: %q", p.stderr.String())
	}
}

// moat mcp started at a terminal says what it is: it waits for JSON-RPC
// from a client, which a person typing there would not guess.
func TestMCPAtATerminalSaysWhatItIs(t *testing.T) {
	master, slave := openPty(t)
	defer master.Close()
	defer slave.Close()
	t.Setenv("MOAT_ISOLATE", "off")
	t.Setenv("MOAT_CACHE_DIR", sharedCache(t))
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"mcp", "--root", t.TempDir()}, slave, io.Discard, &stderr) }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), "moat mcp: serving"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not serving; stderr %q", stderr.String())
		}
	}
	cancel() // as a signal does
	if c := <-code; c != exitOK {
		t.Errorf("exit status %d, want 0", c)
	}
	if !strings.Contains(stderr.String(), "moat mcp: this is an MCP server; it speaks JSON-RPC on standard input and output to an MCP client") {
		t.Errorf("no word on what it is: %q", stderr.String())
	}
}

// While a thinking model thinks, the live line says so and counts; when
// the answer starts, one line says how long it thought, and the thinking
// itself is not shown.
func TestChatThinkingLine(t *testing.T) {
	p := startPty(t, `{"models":[{"name":"qwen3","tools":true,"thinking":true}],
		"turns":[{"thinking":"one two three four","text":"Done.","chunk_ms":500}]}`, 0, true)
	p.waitPrompts(1)
	p.typeKeys("Go\r")
	p.waitPrompts(2)
	p.typeKeys("\x04")
	if c := p.exit(); c != exitOK {
		t.Errorf("exit status %d, want 0", c)
	}
	screen := p.screen.String()
	if !strings.Contains(screen, "thinking… ") {
		t.Errorf("no thinking line on the screen: %q", screen)
	}
	i := strings.Index(screen, "\r\x1b[K· thought for ")
	if i < 0 || !strings.Contains(screen[i:], "(--show-thinking shows it)\r\nDone.\r\n") {
		t.Errorf("the live line was not erased and followed by how long it thought, then the answer: %q", screen)
	}
	if strings.Contains(screen, "three") {
		t.Errorf("the thinking was shown: %q", screen)
	}
}
