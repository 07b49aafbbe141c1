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
	// A worktree's .git is a file naming its git folder, whose config
	// (and its common folder's) git reads: gitrepository-layout.
	if b, ok := read(".git"); ok {
		if dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
			dir = strings.TrimSpace(dir)
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(g.rootReal, dir)
			}
			dirs := []string{dir}
			if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
				common := strings.TrimSpace(string(c))
				if !filepath.IsAbs(common) {
					common = filepath.Join(dir, common)
				}
				dirs = append(dirs, common)
			}
			for _, d := range dirs {
				for _, name := range []string{"config", "config.worktree"} {
					cfg := filepath.Join(d, name)
					if b, err := os.ReadFile(cfg); err == nil && len(b) <= maxConfigBytes {
						extra[cfg] = b
					}
				}
			}
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
