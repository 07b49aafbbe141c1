package gate

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moatdev/moat/host/policy"
)

// maxConfigBytes bounds what the gate reads of one configuration file of
// the root to learn what it names (policy.ConfigNamed).
const maxConfigBytes = 1 << 20

// configNamed is what the root's configuration files (and the user's git
// config) name as code to run, read afresh for each proposal: a config
// the person approved a moment ago counts at once.
func (g *Gate) configNamed() []policy.Named {
	read := func(rel string) ([]byte, bool) {
		f, err := g.root.Open(filepath.FromSlash(rel))
		if err != nil {
			return nil, false
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return nil, false
		}
		b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes))
		return b, err == nil
	}
	home := os.Getenv("HOME")
	extra := map[string][]byte{}
	for _, p := range []string{
		filepath.Join(home, ".gitconfig"),
		filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "config"),
		filepath.Join(home, ".config", "git", "config"),
	} {
		if !filepath.IsAbs(p) {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && len(b) <= maxConfigBytes {
			extra[p] = b
		}
	}
	toRel := func(p string) (string, bool) {
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home == "" {
				return "", false
			}
			p = filepath.Join(home, p[1:])
		}
		if filepath.IsAbs(p) {
			for _, base := range []string{g.opt.Root, g.rootReal} {
				if r, err := filepath.Rel(base, filepath.Clean(p)); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
					return filepath.ToSlash(r), true
				}
			}
			return "", false
		}
		r, err := policy.Clean(path.Clean(filepath.ToSlash(p)))
		return r, err == nil
	}
	return policy.ConfigNamed(read, extra, toRel)
}
