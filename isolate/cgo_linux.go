//go:build cgo

package isolate

// cgoLinked is true in a binary built with cgo: see landlockNeedsProc.
const cgoLinked = true
