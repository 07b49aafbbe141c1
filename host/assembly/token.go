package assembly

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/moatdev/moat/host/mcpserver"
)

// maxTokenFileBytes bounds what is read of a token file.
const maxTokenFileBytes = 4 << 10

// TokenFile reads the bearer token of moat mcp --listen from path, or
// creates the file (mode 0600) with a new random token when there is none
// (created is then true). The file must be readable by its owner alone
// (where the system has such modes) and outside every root the tools
// serve, where the model could read it; a file that breaks either rule,
// or holds no usable token, is a Usage error naming from (the flag or
// environment variable path came from, as [FileError] takes it).
func TokenFile(path, from string, roots ...string) (token string, created bool, err error) {
	for _, root := range roots {
		if canon, err := filepath.Abs(root); err == nil {
			if c, err := filepath.EvalSymlinks(canon); err == nil {
				root = c
			}
		}
		if Inside(path, root) {
			return "", false, usagef("%s %s is inside the root %s, where the tools could read it; keep the token outside", from, path, root)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		tok, err := newTokenFile(f)
		if err != nil {
			os.Remove(path)
			return "", false, fmt.Errorf("%s %s: %v", from, path, err)
		}
		return tok, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return "", false, FileError(from, path, err)
	}
	tok, err := readTokenFile(path, from)
	return tok, false, err
}

// newTokenFile writes a new token to f and closes it.
func newTokenFile(f *os.File) (string, error) {
	tok, err := mcpserver.NewToken()
	if err == nil {
		_, err = io.WriteString(f, tok+"\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return tok, err
}

// readTokenFile reads the token of an existing token file, refusing one
// others can read or that holds no usable token.
func readTokenFile(path, from string) (string, error) {
	r, err := os.Open(path)
	if err != nil {
		return "", FileError(from, path, err)
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return "", FileError(from, path, err)
	}
	switch {
	case st.IsDir():
		return "", FileError(from, path, errors.New("is a folder, not a file"))
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0:
		return "", usagef("%s %s can be read or written by other users (mode %04o); make it private with chmod 600 %s", from, path, st.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxTokenFileBytes+1))
	if err != nil {
		return "", FileError(from, path, err)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case len(b) > maxTokenFileBytes:
		return "", usagef("%s %s: more than %d bytes; it should hold the token alone", from, path, maxTokenFileBytes)
	case len(tok) < 16:
		return "", usagef("%s %s: the token must be at least 16 characters (delete the file and moat makes a new one)", from, path)
	case strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return "", usagef("%s %s: the token must be one word of printable ASCII (it travels in an HTTP header)", from, path)
	}
	return tok, nil
}

// Inside reports whether dir is root or below it, symlinks resolved as
// far as dir exists (root is taken as it is: resolve it first).
func Inside(dir, root string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if canon, err := filepath.EvalSymlinks(p); err == nil {
			abs = filepath.Join(canon, rest)
			break
		}
		if filepath.Dir(p) == p {
			break
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
	rel, err := filepath.Rel(root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
