package session

import (
	"errors"
	"path/filepath"
)

// Dir is the folder sessions are kept in, the user's state folder:
// $XDG_STATE_HOME/moat/sessions where that is set (to an absolute path, as
// the XDG spec requires), else ~/.local/state/moat/sessions; on macOS
// ~/Library/Application Support/moat/sessions, on Windows
// %LocalAppData%\moat\sessions. goos is runtime.GOOS.
//
// Go has no os.UserStateDir, and github.com/adrg/xdg reads the environment
// once into package variables; moat passes its environment explicitly
// (tests set it per run), so the few rules are here.
func Dir(getenv func(string) string, goos string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "moat", "sessions"), nil
	}
	var base string
	switch goos {
	case "windows":
		base = getenv("LocalAppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			base = filepath.Join(h, "Library", "Application Support")
		}
	case "plan9":
		if h := getenv("home"); h != "" {
			base = filepath.Join(h, "lib", "state")
		}
	default:
		if h := getenv("HOME"); h != "" {
			base = filepath.Join(h, ".local", "state")
		}
	}
	if base == "" || !filepath.IsAbs(base) {
		return "", errors.New("no state folder: set XDG_STATE_HOME (or HOME) to an absolute path")
	}
	return filepath.Join(base, "moat", "sessions"), nil
}
