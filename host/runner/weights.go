package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// WeightsName is the name of the weights file of cfg's roots
// (Config.Weights; host/fanout LoadWeights says what it holds), made by
// the process that decides cfg, whose roots are the host's paths: a hash
// of each root's label and path. "" where there is no cache folder.
func WeightsName(cfg Config) string {
	if cfg.CacheDir == "" {
		return ""
	}
	h := sha256.New()
	h.Write([]byte("moat weights\x00"))
	for _, d := range cfg.Dirs() {
		h.Write([]byte(d.Label + "\x00" + d.Path + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WeightsPath is the weights file's path: "" for none.
func (c Config) WeightsPath() string {
	if c.Weights == "" || c.CacheDir == "" {
		return ""
	}
	return filepath.Join(c.CacheDir, "weights", c.Weights)
}
