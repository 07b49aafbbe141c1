// Command moat-tools is moat's WASI guest: the read-only tools, run by the
// host in wazero with a single preopen at "/" that the host has already
// confined to the sandbox root.
//
// It speaks the line protocol of package proto: one Request per line on
// stdin, one Response per line on stdout, flushed after each, so the host
// may keep one instance for several calls or start one per call.
//
// Build (reproducibly; the host embeds the result):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -ldflags="-s -w" -o /tmp/tools.wasm ./guest/cmd/moat-tools
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
	"github.com/moatdev/moat/guest/wasifs"
)

// Memory tuning. The host caps linear memory at 256 MiB, and wasm memory
// never shrinks once grown, so the Go heap is kept well inside it: a soft
// limit that makes the GC work harder before the cap is reached, and a low
// GC percent because grep and read_file allocate in bursts per call.
const (
	memoryLimit = 160 << 20
	gcPercent   = 50
	stdinBuffer = 1 << 20 // requests are small, but arguments may carry MBs
)

func main() {
	debug.SetMemoryLimit(memoryLimit)
	debug.SetGCPercent(gcPercent)
	os.Exit(run(wasifs.New("/"), os.Stdin, os.Stdout, os.Stderr))
}

// run serves requests until EOF. A malformed request ends the guest with
// status 1: the host wrote it, so it is a host bug, and answering it with a
// guessed ID could pair a response with the wrong call.
func run(fsys fs.FS, stdin io.Reader, stdout, stderr io.Writer) int {
	in := bufio.NewReaderSize(stdin, stdinBuffer)
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 && !isBlank(line) {
			var req proto.Request
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				fmt.Fprintf(stderr, "moat-tools: malformed request: %v\n", jerr)
				return 1
			}
			if werr := enc.Encode(tools.Run(fsys, req)); werr != nil {
				fmt.Fprintf(stderr, "moat-tools: writing response: %v\n", werr)
				return 1
			}
			if werr := out.Flush(); werr != nil {
				fmt.Fprintf(stderr, "moat-tools: writing response: %v\n", werr)
				return 1
			}
		}
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil {
			fmt.Fprintf(stderr, "moat-tools: reading request: %v\n", err)
			return 1
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
