package gate

import (
	"errors"
	"io/fs"

	"github.com/moatdev/moat/host/policy"
)

// gitDir refuses rel when a folder above it is, or once rel is written
// would be, what git takes for a repository (policy.GitDir): everything
// in such a folder is git's internals (config, hooks, refs), whatever the
// folder is called. Asked before the prompt and again before the write.
func (g *Gate) gitDir(rel string) error {
	dir, ok := policy.GitDir(rel, func(p string) bool {
		_, err := g.root.Lstat(p)
		return !errors.Is(err, fs.ErrNotExist)
	})
	if !ok {
		return nil
	}
	where := "inside " + dir + ","
	if dir == "." {
		where = "inside the workspace root,"
	}
	return refusal(ErrDenied, "Ask the user to make this change themselves.", "is %s which git reads as a repository (HEAD with objects/ and refs/, or commondir); moat never writes a repository's internals, under any folder name", where)
}

// gitHead refuses a HEAD git would accept (policy.GitHead), wherever it
// is written: without one no folder is a repository.
func gitHead(rel string, content []byte) error {
	if !policy.GitHead(rel, content) {
		return nil
	}
	return refusal(ErrDenied, "Ask the user to make this change themselves.", "would be a HEAD that git accepts (a ref or an object id), which makes its folder part of a repository; moat never writes one, under any folder name")
}

// gitConfig refuses content that git would read as configuration setting
// a command (policy.GitConfigCommand), wherever it is written: the folder
// may become a repository later, or the file be included from one.
func gitConfig(content []byte) error {
	key, ok := policy.GitConfigCommand(content)
	if !ok {
		return nil
	}
	return refusal(ErrDenied, "Ask the user to make this change themselves.", "would hold git configuration that sets %s, which makes git run a command; moat never writes one, under any name", key)
}
