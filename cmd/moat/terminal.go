package main

import (
	"os"

	"golang.org/x/term"
)

// onTerminal calls fn with v's descriptor when v is an *os.File open on a
// terminal, and reports whether it is one. It asks through SyscallConn,
// never f.Fd(): Fd puts the descriptor in blocking mode, and then closing
// it no longer ends a read in progress (as an interrupted approval question
// once took the next line typed at chat's prompt). fn runs inside
// Control, while the descriptor is certain to be open.
func onTerminal(v any, fn func(fd int)) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	yes := false
	rc.Control(func(fd uintptr) {
		if yes = term.IsTerminal(int(fd)); yes && fn != nil {
			fn(int(fd))
		}
	})
	return yes
}

// isTerminal reports whether v is an *os.File open on a terminal.
func isTerminal(v any) bool { return onTerminal(v, nil) }

// terminalSize is v's size in columns and rows when v is a terminal that
// says (a fresh pseudo-terminal reports 0x0); ok is false otherwise.
func terminalSize(v any) (cols, rows int, ok bool) {
	var err error
	if !onTerminal(v, func(fd int) { cols, rows, err = term.GetSize(fd) }) || err != nil {
		return 0, 0, false
	}
	return cols, rows, true
}
