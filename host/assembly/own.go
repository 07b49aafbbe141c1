package assembly

import (
	"os"
	"path/filepath"
	"strings"
)

// OwnPaths are the files and folders that configure moat, which no
// proposal may write (policy.Protect), wherever the root is: the config
// files (Options.ConfigFiles), and moat's folder in every place the
// environment could make it read one ($XDG_CONFIG_HOME, ~/.config,
// macOS's and Windows' folders; ~ both $HOME and the account's home
// folder); the state folder (saved sessions) likewise; and the compile
// cache (native code moat runs): Options.CacheDir, $MOAT_CACHE_DIR, the
// one in use, the user's cache folder and the private fallback under the
// temporary folder.
func (o *Options) OwnPaths() []string {
	var out []string
	add := func(p ...string) {
		for _, q := range p {
			if q == "" {
				continue
			}
			if a, err := filepath.Abs(ExpandHome(q)); err == nil {
				out = append(out, a)
			}
		}
	}
	sub := func(base string, elem ...string) string {
		if base == "" || !filepath.IsAbs(base) {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	add(o.ConfigFiles...)
	add(o.CacheDir, o.getenv("MOAT_CACHE_DIR"), o.Cache().Dir)
	if d, err := os.UserConfigDir(); err == nil {
		add(sub(d, "moat"))
	}
	if d, err := os.UserCacheDir(); err == nil {
		add(sub(d, "moat"))
	}
	add(
		sub(o.getenv("XDG_CONFIG_HOME"), "moat"), sub(o.getenv("AppData"), "moat"),
		sub(o.getenv("XDG_STATE_HOME"), "moat"), sub(o.getenv("LocalAppData"), "moat"),
		sub(o.getenv("XDG_CACHE_HOME"), "moat"),
		fallbackDir(),
	)
	for _, home := range homes(o.getenv) {
		add(sub(home, ".config", "moat"), sub(home, "Library", "Application Support", "moat"),
			sub(home, ".local", "state", "moat"), sub(home, ".cache", "moat"), sub(home, "Library", "Caches", "moat"))
	}
	return out
}

// ExpandHome reads a leading ~ as the home folder, as a shell would have
// (no shell expands one in a variable or a config file).
func ExpandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
