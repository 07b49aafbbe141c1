package assembly

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Cache is the compile cache a session uses and, when it is not the one
// asked for (Options.CacheDir, else the user's cache folder), why.
type Cache struct {
	Dir    string // "" for none: the guest is compiled for every command
	Wanted string // the folder asked for, when Dir is another
	Why    string // why Wanted could not be used
	noted  bool   // the note has been shown
}

// Cache decides the compile cache, once for these options (and their
// copies). A cache that cannot be written does not fail anything, but it
// makes every command compile the guest again, 15 times slower than
// loading it: so moat falls back to a private folder of its own under the
// system's temporary folder, and says so ([Cache.Note]).
func (o *Options) Cache() *Cache {
	if o.cache != nil {
		return o.cache
	}
	want := o.CacheDir
	if want == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			o.cache = fallbackCache("", err)
			return o.cache
		}
		want = filepath.Join(d, "moat")
	}
	if err := writableCache(want); err != nil {
		o.cache = fallbackCache(want, err)
	} else {
		o.cache = &Cache{Dir: want}
	}
	return o.cache
}

// Note says once, on w, that the cache is not the one asked for.
func (ch *Cache) Note(w io.Writer) {
	if ch.Why == "" || ch.noted {
		return
	}
	ch.noted = true
	switch {
	case ch.Dir == "":
		fmt.Fprintf(w, "moat: no compile cache (%s), so the tools are compiled anew each time (seconds); give a folder you can write with --cache-dir\n", ch.Why)
	case ch.Wanted == "":
		fmt.Fprintf(w, "moat: compile cache in %s (%s); choose one with --cache-dir\n", ch.Dir, ch.Why)
	default:
		fmt.Fprintf(w, "moat: the compile cache %s cannot be written (%s); using %s instead (choose with --cache-dir)\n", ch.Wanted, ch.Why, ch.Dir)
	}
}

// fallbackDir is the private cache's folder under the temporary folder.
func fallbackDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("moat-cache-%d", os.Getuid()))
}

// fallbackCache is the private cache under the temporary folder, for when
// wanted cannot be used.
func fallbackCache(wanted string, err error) *Cache {
	why := Describe(err)
	if wanted == "" {
		why = "no user cache folder: " + why
	}
	dir := fallbackDir()
	if perr := privateCache(dir); perr != nil {
		// Someone else's, or not a folder: a fresh one, cold, for this
		// command alone.
		fresh, ferr := os.MkdirTemp("", "moat-cache-")
		if ferr != nil {
			return &Cache{Wanted: wanted, Why: why}
		}
		dir = fresh
	}
	return &Cache{Dir: dir, Wanted: wanted, Why: why}
}

// writableCache makes sure dir (and wazero's folder in it) exists and that
// a file can be created there.
func writableCache(dir string) error {
	sub := filepath.Join(dir, "wazero")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(sub, ".moat-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// privateCache makes sure dir is a folder only this user can write, not a
// symbolic link: the temporary folder is shared, and the cache holds
// native code that moat runs, so a folder another user made (or can
// write) must not be used.
func privateCache(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("%s is not a private folder of this user", dir)
	}
	return writableCache(dir)
}
