// Command moat-wasmpack joins the data segments of the guest module in
// place (package guest/wasmpack): a step of `make guest`.
//
//	moat-wasmpack guest/tools.wasm
package main

import (
	"fmt"
	"os"

	"github.com/moatdev/moat/guest/wasmpack"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: moat-wasmpack MODULE.wasm (rewritten in place)")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "moat-wasmpack:", err)
		os.Exit(1)
	}
}

func run(name string) error {
	mod, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	packed, err := wasmpack.Pack(mod, wasmpack.MaxGap)
	if err != nil {
		return err
	}
	return os.WriteFile(name, packed, 0o644)
}
