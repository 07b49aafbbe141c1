// Package guest holds moat's WASI tool program, compiled and committed as
// tools.wasm so that `go build ./cmd/moat` needs no other step.
//
// The program's source is ./cmd/moat-tools (the tool logic is ./tools).
// `make guest` rebuilds tools.wasm reproducibly, and TestWasmUpToDate fails
// when the committed file differs from a fresh build.
package guest

import (
	_ "embed"
	"strings"
)

// The exact commands that built tools.wasm (run from the module root; `make guest`):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -ldflags="-s -w" -o guest/tools.wasm ./guest/cmd/moat-tools
//	go run ./cmd/moat-wasmpack guest/tools.wasm
//
//go:embed tools.wasm
var wasm []byte

// Wasm returns the guest module. The slice is shared; callers must not modify it.
func Wasm() []byte { return wasm }

// BuildID returns the Go build ID recorded in the guest module (its first
// section, "go:buildid"): a hash of the guest's inputs and content, so it
// names this exact guest as well as a hash of its megabytes would, for the
// cost of reading a few bytes. It is "" if the module has none.
func BuildID() string {
	const name = "go:buildid"
	b := wasm
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return ""
	}
	b = b[8:]
	if len(b) == 0 || b[0] != 0 { // custom section
		return ""
	}
	size, n := uleb(b[1:])
	if n == 0 || size > uint64(len(b)-1-n) {
		return ""
	}
	sec := b[1+n : 1+n+int(size)]
	nlen, n := uleb(sec)
	if n == 0 || nlen != uint64(len(name)) || len(sec) < n+len(name) || string(sec[n:n+len(name)]) != name {
		return ""
	}
	// The payload is the linker's note: \xff Go build ID: "ID"\n \xff
	_, id, ok := strings.Cut(string(sec[n+len(name):]), `Go build ID: "`)
	if id, _, closed := strings.Cut(id, `"`); ok && closed {
		return id
	}
	return ""
}

// uleb decodes an unsigned LEB128 number, returning it and its length
// (0 if b does not hold a valid one of at most 5 bytes).
func uleb(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 5; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
