package runner

import (
	"runtime"
	"testing"
)

// SpareProc adds one P, and none when GOMAXPROCS is set.
func TestSpareProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	SpareProc(func(string) string { return "2" })
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("with GOMAXPROCS set: %d Ps, want %d", got, before)
	}
	SpareProc(func(string) string { return "" })
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Errorf("%d Ps, want %d", got, before+1)
	}
}
