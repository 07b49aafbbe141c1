package runner

import "runtime"

// SpareProc gives the Go scheduler one P more than it would take, unless
// GOMAXPROCS is set. A grep over a large tree keeps every core busy with
// guests that make a system call every few microseconds (an open, a read,
// a close per file); with no P idle, the runtime hands the P of each call
// that outlives a scheduler tick to another thread and takes it back
// after, which on 2 cores made 75,000 context switches of one grep over
// 300,000 files. With a P to spare it made 20,000, and the grep's median
// time fell by a twelfth (`GOMAXPROCS=2` against `3`, five runs each, in
// BENCHMARKS.md's generated tree). Commands that run guests call it first
// thing in main: it is the process's setting, not one runner's.
func SpareProc(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
}
