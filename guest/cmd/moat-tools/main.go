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
//	go run ./cmd/moat-wasmpack /tmp/tools.wasm # the data segments joined (make guest does both)
package main

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime/debug"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
	"github.com/moatdev/moat/guest/wasifs"
)

// Memory tuning. The host caps linear memory at 256 MiB, and wasm memory
// never shrinks once grown, so the Go heap is kept well inside it by a soft
// limit that makes the GC work harder before the cap is reached. Below that
// limit the GC percent sets what a call costs: Go lets the heap grow to
// 4 MB times percent/100 before its first collection, and most calls hold
// little (a walk's live heap is about 2 MB) while allocating per file and
// per folder entry, so that minimum is what they keep resident. At 400 it
// was 16 MB a guest, and a grep or glob runs two; at 200 a grep of a tree
// of 300,000 files held 15 MiB less (112 -> 97 MiB) in the same time, a
// glob 15 MiB less, and the listing of a 100,000-entry folder took 6%
// longer. At 100 that listing took 19% longer and at 50 the collections
// took about 5% of a full-tree grep's CPU time.
const (
	memoryLimit = 160 << 20
	gcPercent   = 200
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
	var buf []byte
	handlers := tools.NewHandlers()
	fail := func(what string, err error) int {
		io.WriteString(stderr, "moat-tools: "+what+": "+err.Error()+"\n")
		return 1
	}
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 && !isBlank(line) {
			req, jerr := proto.DecodeRequest(line)
			if jerr != nil {
				return fail("malformed request", jerr)
			}
			resp := handlers.Run(fsys, req)
			buf = append(proto.AppendResponse(buf[:0], &resp), '\n')
			if _, werr := out.Write(buf); werr != nil {
				return fail("writing response", werr)
			}
			if werr := out.Flush(); werr != nil {
				return fail("writing response", werr)
			}
		}
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil {
			return fail("reading request", err)
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
