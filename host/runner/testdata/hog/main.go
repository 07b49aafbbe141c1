// Command hog is a hostile stand-in for the tool guest, for the runner's
// tests: it reads one request and then exhausts its memory or spins.
package main

import (
	"bufio"
	"os"
	"strings"
)

func main() {
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	switch {
	case strings.Contains(line, `"memory"`):
		var keep [][]byte
		for {
			keep = append(keep, make([]byte, 1<<20))
			keep[len(keep)-1][0] = 1
		}
	case strings.Contains(line, `"spin"`):
		// Pure computation, no system call: a few seconds of it, far past
		// the test's deadline, then an ordinary exit (a guest that spins
		// forever cannot be preempted in-process; see the runner's doc).
		n := 0
		for i := 0; i < 2e9; i++ {
			n += i & 1
		}
		os.Exit(n & 1)
	}
}
