// Command moat lets a local LLM explore a folder safely: read-only tools run
// as a WASI program on a confined filesystem, optionally inside Linux
// namespaces, and writes only happen after a person approves them.
package main

import (
	"context"
	"os"

	"github.com/moatdev/moat/host/runner"
)

func main() {
	runner.SpareProc(os.Getenv)
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
