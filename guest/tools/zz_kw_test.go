package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/moatdev/moat/guest/proto"
)

func TestZZKW(t *testing.T) {
	f := os.Getenv("ZZARGSFILE")
	if f == "" {
		t.Skip()
	}
	b, _ := os.ReadFile(f)
	fsys := os.DirFS(filepath.Join(runtime.GOROOT(), "src"))
	var peak uint64
	done := make(chan bool)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	t0 := time.Now()
	resp := Run(fsys, proto.Request{Tool: proto.GrepShard, Args: b})
	close(done)
	fmt.Printf("took %v bytes %d peakHeapInuse %dMB err=%v\n", time.Since(t0), len(resp.Text)+len(resp.Shard), peak>>20, resp.IsError)
}
