// Package guest holds moat's WASI tool program, compiled and committed as
// tools.wasm so that `go build ./cmd/moat` needs no other step.
//
// The program's source is ./cmd/moat-tools (the tool logic is ./tools).
// `make guest` rebuilds tools.wasm reproducibly, and TestWasmUpToDate fails
// when the committed file differs from a fresh build.
package guest

import _ "embed"

// The exact command that built tools.wasm (run from the module root; `make guest`):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -ldflags="-s -w" -o guest/tools.wasm ./guest/cmd/moat-tools
//
//go:embed tools.wasm
var wasm []byte

// Wasm returns the guest module. The slice is shared; callers must not modify it.
func Wasm() []byte { return wasm }
