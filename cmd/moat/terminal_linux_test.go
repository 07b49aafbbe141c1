package main

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moatdev/moat/host/agent"
)

// Every way moat looks at a terminal (is it one, how wide, its state for
// the line editor) leaves the descriptor non-blocking: in blocking mode,
// closing it no longer ends a read in progress, which is how an
// interrupted approval question once took the next line typed at chat's
// prompt.
func TestTerminalChecksKeepNonblocking(t *testing.T) {
	master, slave := openPty(t)
	defer master.Close()
	defer slave.Close()
	if err := setWinsize(slave, 100); err != nil {
		t.Fatal(err)
	}
	flags := func() int {
		t.Helper()
		rc, err := slave.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		fl := 0
		rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
		if err != nil {
			t.Fatal(err)
		}
		return fl
	}
	if flags()&unix.O_NONBLOCK == 0 {
		t.Skip("the pty did not open non-blocking; nothing to keep")
	}
	e := &env{stdin: slave, stdout: slave, stderr: slave, getenv: func(k string) string {
		if k == "TERM" {
			return "xterm"
		}
		return ""
	}}
	checks := []struct {
		name string
		do   func() bool // whether the check saw the terminal
	}{
		{"isTerminal", func() bool { return isTerminal(slave) }},
		{"helpWidth", func() bool { return helpWidth(e) == 100 }},
		{"terminalWidth", func() bool { return terminalWidth(slave) == 100 }},
		{"forTerminal", func() bool { return forTerminal(e, agent.Config{Model: "m"}).Waiting != nil }},
		{"thinkingOut", func() bool { _, dim := thinkingOut(e).(dimWriter); return dim }},
		{"newLineReader", func() bool { r := newLineReader(e); defer r.close(); return r.interactive && r.echo == e.stdout }},
	}
	for _, c := range checks {
		if !c.do() {
			t.Errorf("%s did not see the terminal", c.name)
		}
		if flags()&unix.O_NONBLOCK == 0 {
			t.Fatalf("%s put the terminal in blocking mode", c.name)
		}
	}
}
