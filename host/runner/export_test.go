package runner

import "context"

// CompileWasm compiles another module in place of the guest, for tests of
// how the runner survives a hostile one.
func CompileWasm(ctx context.Context, wasm []byte) (*Module, error) {
	return compile(ctx, "", wasm)
}
