//go:build !cgo

package isolate

// cgoLinked is false in a binary built without cgo: see landlockNeedsProc.
const cgoLinked = false
