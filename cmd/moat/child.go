package main

import (
	"context"

	"github.com/moatdev/moat/isolate"
)

// maybeChild runs the isolated sandbox child when this process was
// re-executed as one; it never returns to normal command handling then.
func maybeChild(ctx context.Context, args []string) (int, bool) {
	return isolate.MaybeChild(ctx, args)
}
