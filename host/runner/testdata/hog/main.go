// Command hog is a hostile stand-in for the tool guest, for the runner's
// tests: it reads one request and then exhausts its memory or spins.
package main

import (
	"bufio"
	"os"
	"strings"
	"time"
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
		// Pure computation, far past the test's deadline (1 s), then an
		// ordinary exit: a guest that spins forever cannot be preempted
		// in-process (see the runner's doc). It looks at the clock only
		// every few million steps, so that how fast this machine counts
		// cannot decide whether the deadline is passed.
		start := time.Now()
		n := 0
		for i := 0; time.Since(start) < 5*time.Second; i++ {
			for j := 0; j < 1<<22; j++ {
				n += j & 1
			}
		}
		os.Exit(n & 1)
	}
}
