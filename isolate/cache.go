package isolate

import (
	"os"
	"path/filepath"
	"runtime"
)

// CacheWarm reports whether dir holds a compiled guest for this machine.
// It knows the layout host/runner and wazero give the cache: runner puts
// wazero's cache in dir/wazero, and wazero keeps one folder per version,
// architecture and OS (wazero-VERSION-GOARCH-GOOS) holding one file per
// compiled module.
func CacheWarm(dir string) bool {
	if dir == "" {
		return false
	}
	dirs, _ := filepath.Glob(filepath.Join(dir, "wazero", "wazero-*-"+runtime.GOARCH+"-"+runtime.GOOS))
	for _, d := range dirs {
		if ents, err := os.ReadDir(d); err == nil && len(ents) > 0 {
			return true
		}
	}
	return false
}
