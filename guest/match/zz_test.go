package match

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestZZ(t *testing.T) {
	b, err := os.ReadFile(os.Getenv("ZZF"))
	if err != nil {
		t.Skip()
	}
	for _, ic := range []bool{false, true} {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		m, err := Compile(string(b), ic)
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(t0)
		runtime.ReadMemStats(&m1)
		runtime.GC()
		var m2 runtime.MemStats
		runtime.ReadMemStats(&m2)
		fmt.Printf("ic=%v compile=%v dfa=%v progLen=%d ac=%v exact=%v alloc=%dMB sys=%dMB live=%dMB\n", ic, d, m.dfa != nil, m.progLen, m.pre != nil && m.pre.ac != nil, m.pre != nil && m.pre.exact, (m1.TotalAlloc-m0.TotalAlloc)>>20, m1.Sys>>20, m2.HeapInuse>>20)
		runtime.KeepAlive(m)
	}
}
