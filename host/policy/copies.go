package policy

import "strings"

// Secrets are also stored under names that are not theirs: dotfiles
// managers keep ~/.netrc as "dot_netrc" (chezmoi, with attribute prefixes
// such as "private_" and suffixes such as ".tmpl") or "dot-netrc" (GNU
// stow --dotfiles), and people keep copies beside the original
// ("id_rsa.bak", ".env~", ".env-prod"). Rather than list every such name,
// the deny-list is asked again about the name each would be installed or
// restored as: a component whose stored form decodes to a denied name is
// denied. Only the deny-list is asked (never-write rules are about what a
// tool runs, and a dotfiles source is not run).
//
// chezmoi's source state attributes: https://www.chezmoi.io/reference/source-state-attributes/
// GNU stow's --dotfiles: https://www.gnu.org/software/stow/manual/stow.html

// chezmoiPrefixes are the attribute prefixes chezmoi strips before "dot_"
// (in any order here, which accepts more than chezmoi does).
var chezmoiPrefixes = [...]string{
	"after_", "before_", "create_", "empty_", "encrypted_", "exact_", "executable_", "external_",
	"modify_", "once_", "onchange_", "private_", "readonly_", "remove_", "run_", "symlink_",
}

// storedSuffixes are what a stored or copied name adds to the real one:
// chezmoi's template and encryption suffixes, and backup and environment
// copies. Each is stripped once, last first.
var storedSuffixes = [...]string{
	".tmpl", ".literal", ".age", ".asc", // chezmoi
	"~", ".bak", ".backup", ".old", ".orig", ".save", ".swp", // copies
	"-prod", "_prod", "-production", "_production", // per-environment copies
}

// storedForm returns the name a stored or copied component stands for,
// as a dot (chezmoi's "dot_", stow's "dot-") and the rest, a substring of
// c, and whether it differs from c. c is normalized (lower case). It
// allocates nothing.
func storedForm(c string) (dot bool, rest string, changed bool) {
	if !mayBeStored(c) {
		return false, c, false
	}
	d := c
	for again := true; again; {
		again = false
		if !strings.ContainsRune("~lecdkpgn", rune(d[len(d)-1])) { // the suffixes' last letters
			break
		}
		for _, s := range storedSuffixes {
			if len(d) > len(s) && strings.HasSuffix(d, s) {
				d, again = d[:len(d)-len(s)], true
			}
		}
	}
	if strings.HasPrefix(d, ".") && len(d) > 1 && strings.HasSuffix(c, ".swp") { // vim's swap file of "id_rsa" is ".id_rsa.swp"
		d = d[1:]
	}
	for again := true; again; {
		again = false
		k := strings.IndexByte(d, '_')
		if k <= 0 || k+1 == len(d) {
			break
		}
		for _, p := range chezmoiPrefixes { // each ends at its first "_"
			if len(p) == k+1 && d[:k+1] == p {
				d, again = d[k+1:], true
				break
			}
		}
	}
	switch {
	case strings.HasPrefix(d, "literal_") && len(d) > len("literal_"):
		d = d[len("literal_"):]
	case (strings.HasPrefix(d, "dot_") || strings.HasPrefix(d, "dot-")) && len(d) > 4:
		return true, d[4:], true
	}
	return false, d, d != c
}

// stored rewrites a normalized path component by component into the names
// it stands for, and reports whether any changed. It allocates only then.
func stored(n string) (string, bool) {
	any := false
	for rest := n; rest != "" && !any; {
		c, tail, _ := strings.Cut(rest, "/")
		_, _, any = storedForm(c)
		rest = tail
	}
	if !any {
		return n, false
	}
	parts := strings.Split(n, "/")
	for i, c := range parts {
		if dot, d, ok := storedForm(c); ok {
			if dot {
				d = "." + d
			}
			parts[i] = d
		}
	}
	return strings.Join(parts, "/"), true
}

// mayBeStored is storedForm's quick test: every prefix holds "_" or "-",
// every suffix "~", "-", "_" or a dot after the first byte.
func mayBeStored(c string) bool {
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case '_', '-', '~':
			return true
		case '.':
			if i > 0 {
				return true
			}
		}
	}
	return false
}
