// Command moat lets a local LLM explore a folder safely: read-only tools run
// as a WASI program on a confined filesystem, optionally inside Linux
// namespaces, and writes only happen after a person approves them.
package main

import (
	"context"
	"os"
	"runtime"
)

func main() {
	spareProc(os.Getenv)
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// spareProc gives the Go scheduler one P more than it would take, unless
// GOMAXPROCS is set. A grep over a large tree keeps every core busy with
// guests that make a system call every few microseconds (an open, a read,
// a close per file); with no P idle, the runtime hands the P of each call
// that outlives a scheduler tick to another thread and takes it back
// after, which on 2 cores made 75,000 context switches of one grep over
// 300,000 files. With a P to spare it made 20,000, and the grep's median
// time fell by a twelfth (`GOMAXPROCS=2` against `3`, five runs each, in
// BENCHMARKS.md's generated tree).
func spareProc(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
}
