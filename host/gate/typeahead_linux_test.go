package gate

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/host/toolspec"
)

// ptyTerminal is a pseudo-terminal the gate asks on: the test types on
// the master side, the gate opens the slave for each review, as it opens
// /dev/tty.
type ptyTerminal struct {
	t      *testing.T
	master *os.File
	slave  string
	mu     sync.Mutex
	screen strings.Builder
}

func newPtyTerminal(t *testing.T) *ptyTerminal {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pty number: %v", err)
	}
	p := &ptyTerminal{t: t, master: m, slave: fmt.Sprintf("/dev/pts/%d", n)}
	// Held open for the whole test, so that input typed while no review
	// has the terminal open is kept, as on a real terminal.
	keep, err := os.OpenFile(p.slave, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pty: %v", err)
	}
	t.Cleanup(func() { keep.Close() })
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			p.mu.Lock()
			p.screen.Write(b[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *ptyTerminal) open() (TTY, error) {
	return os.OpenFile(p.slave, os.O_RDWR|syscall.O_NOCTTY, 0)
}

func (p *ptyTerminal) count(s string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Count(p.screen.String(), s)
}

func (p *ptyTerminal) typeKeys(s string) {
	p.t.Helper()
	if _, err := p.master.WriteString(s); err != nil {
		p.t.Fatal(err)
	}
}

// waitQuestions waits until the question was shown n times in all.
func (p *ptyTerminal) waitQuestions(n int) {
	p.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); p.count("[y]es") < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.t.Fatalf("question %d never came; screen %q", n, p.screen.String())
		}
	}
}

// answer types keys (a no) at the question until the review ends: a key
// typed in the instant between the question's drawing and the flush is
// discarded too, so it is typed again.
func (p *ptyTerminal) answer(keys string, done <-chan toolspec.Result) toolspec.Result {
	p.t.Helper()
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		select {
		case res := <-done:
			return res
		default:
		}
		p.typeKeys(keys)
		select {
		case res := <-done:
			return res
		case <-time.After(200 * time.Millisecond):
		}
	}
	p.t.Fatal("the review never ended")
	return toolspec.Result{}
}

// Keys typed before a question is on the screen do not answer it: a y
// typed ahead of the first proposal, and a second y typed at the first
// question (which would answer the next proposal), are discarded, and the
// proposals are declined by the n typed once each question was shown.
// Without the flush, both are written without anyone seeing them.
func TestTypedAheadKeysDoNotApprove(t *testing.T) {
	pt := newPtyTerminal(t)
	f := newFixture(t, "", func(o *Options) { o.OpenTTY = pt.open })
	propose := func(name string) <-chan toolspec.Result {
		done := make(chan toolspec.Result, 1)
		go func() { done <- f.propose("propose_write", write(name, "hello\n")) }()
		return done
	}

	pt.typeKeys("y\n") // before anything was asked
	time.Sleep(50 * time.Millisecond)
	first := propose("first.txt")
	pt.waitQuestions(1)
	res := pt.answer("n\ny\n", first) // n for this question, and a y ahead of the next
	if _, ok := f.read("first.txt"); ok || res.Written {
		t.Fatalf("a y typed before the question approved it: %+v", res)
	}
	if !strings.Contains(res.Text, "declined") {
		t.Errorf("the first proposal was not declined by the n typed at it: %+v", res)
	}

	second := propose("second.txt")
	pt.waitQuestions(2)
	res = pt.answer("n\n", second)
	if _, ok := f.read("second.txt"); ok || res.Written {
		t.Fatalf("a y typed at the first question approved the second: %+v", res)
	}
}
