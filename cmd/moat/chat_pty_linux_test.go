package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/host/fakellm"
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
	srv    *fakellm.Server
}

func startPtyChat(t *testing.T, script string) *ptyChat { return startPty(t, script, 0, false) }

// startPty starts moat chat on a pty of the given width (0: the default),
// with stderr on the pty too if stderrTTY.
func startPty(t *testing.T, script string, width int, stderrTTY bool) *ptyChat {
	sc, err := fakellm.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakellm.Start(sc)
	t.Cleanup(srv.Close)
	t.Setenv("OLLAMA_HOST", srv.URL)
	t.Setenv("MOAT_ISOLATE", "off")
	t.Setenv("MOAT_CACHE_DIR", sharedCache(t))
	master, slave := openPty(t)
	p := &ptyChat{t: t, master: master, code: make(chan int, 1), srv: srv}
	if width > 0 {
		if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(width)}); err != nil {
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
		p.code <- run(context.Background(), []string{"chat", "--root", t.TempDir(), "--model", "qwen3", "--writes", "deny"}, slave, slave, stderr)
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
