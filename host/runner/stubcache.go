package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/moatdev/moat/guest/wasmpack"
	"github.com/moatdev/moat/host/atomicfile"
)

// The stub cache. wazero's cache saves compiling the guest, not loading
// it: each process still decodes the whole module and validates every
// function body before it looks in the cache, about two thirds of a
// one-shot call's start (the guest's code is 3 MB of wasm). The guest's
// stub (wasmpack.Stub: the same module, every body `unreachable`, and the
// hash of the real code) decodes and validates in a fraction of that, and
// its code compiled from the real module serves it exactly. So the
// compiled code is filed in the stub folder (stubsName, in wazero's cache
// folder) under the name wazero gives the stub, and loaded from there.
//
// What makes this safe is that the stub folder only ever holds code
// compiled from the real module: wazero never writes there. A load links the
// folder's files into a private folder and points wazero at that; were
// the stub not in the cache, wazero would compile the stub (code that
// traps at once) and file it in the private folder, where the load sees
// a file it did not link, throws the module away, and learns the name
// the code belongs under. [install] then compiles the real module into a
// private folder of its own and moves the one file wazero wrote there to
// that name. A process that may not write the folder (the isolated
// child, whose cache is mounted read-only) points wazero at it directly:
// there a miss fails to be filed, which fails the compile, so a compile
// that succeeds is a hit.

// stubsName is the stub cache's folder in wazero's cache folder.
const stubsName = "stubs"

// staleAfter is the age of a private folder a load or install left
// behind (a process killed in the middle) that the next load removes.
const staleAfter = time.Hour

// Private folders' name prefixes.
const (
	loadPrefix    = "load-"
	installPrefix = "install-"
)

// compileStubbed loads the guest through the stub cache in dir (wazero's
// cache folder), filing its code there first if it is not yet. It returns
// nil (and the caller goes on without the stub cache) when the folder
// cannot serve: a file system without hard links, a cache read-only and
// cold, a guest the stub cannot be made of. A cache whose files do not
// load is cleared and filled again; a file it lost is filed again from
// wazero's own cache when that still holds the code (refill), else the
// guest is compiled again (install).
func compileStubbed(ctx context.Context, dir string, wasm []byte) *Module {
	stub, err := wasmpack.Stub(wasm)
	if err != nil {
		return nil
	}
	stubs := filepath.Join(dir, stubsName)
	for range 3 {
		m, key, err := loadStub(ctx, stubs, stub)
		switch {
		case m != nil:
			return m
		case key != "":
			if refill(dir, stubs, key) {
				continue // filed from wazero's own cache: load it
			}
			return install(ctx, stubs, key, wasm)
		case errors.Is(err, errBroken):
			// The files do not load: clear them; the next load misses,
			// which names the file to fill.
			if clearCode(stubs) != nil {
				return nil
			}
		default:
			return nil
		}
	}
	return nil
}

// errBroken is a stub cache whose code does not load.
var errBroken = errors.New("runner: the stub cache does not load")

// loadStub compiles stub against the stub cache in stubs. On a hit it
// returns the module, marked as loaded through the stub cache. On a miss
// in a private folder it returns the path, relative to the cache folder,
// of the file wazero filed there: the name the real code belongs under.
// Anything else is (nil, "", err), errBroken when wazero failed on the
// files (a truncated or foreign file).
func loadStub(ctx context.Context, stubs string, stub []byte) (*Module, string, error) {
	if err := os.MkdirAll(stubs, 0o700); err != nil && !readOnly(err) {
		return nil, "", err
	}
	priv, err := os.MkdirTemp(stubs, loadPrefix)
	if err != nil {
		if !readOnly(err) || !unwritable(stubs) {
			return nil, "", err
		}
		// Read-only: a miss cannot be filed, so the compile fails on one.
		m, err := compileWith(ctx, stubs, stub)
		if err != nil {
			return nil, "", err // cold, or broken: either way not this process's to mend
		}
		m.stubbed = true
		return m, "", nil
	}
	defer os.RemoveAll(priv)
	sweep(stubs)
	linked, err := linkCode(stubs, priv)
	if err != nil {
		return nil, "", err
	}
	m, err := compileWith(ctx, priv, stub)
	if err != nil {
		return nil, "", errors.Join(errBroken, err)
	}
	fresh := codeFiles(priv, linked)
	if len(fresh) == 0 {
		// A hit, on a file only install writes: code compiled from the
		// real module.
		m.stubbed = true
		return m, "", nil
	}
	m.Close(ctx) // the stub's own code, which traps
	if len(fresh) != 1 {
		return nil, "", errors.New("runner: the stub cache's load filed more than one file")
	}
	return nil, fresh[0], nil
}

// install compiles wasm into a private folder of stubs and moves the one
// file wazero writes there to key (a path relative to stubs). The module
// is returned even when the filing fails: it is compiled all the same.
func install(ctx context.Context, stubs, key string, wasm []byte) *Module {
	priv, err := os.MkdirTemp(stubs, installPrefix)
	if err != nil {
		return nil
	}
	defer os.RemoveAll(priv)
	m, err := compileWith(ctx, priv, wasm)
	if err != nil {
		return nil
	}
	files := codeFiles(priv, nil)
	if len(files) != 1 || filepath.Dir(files[0]) != filepath.Dir(key) {
		return m // not the layout a load saw: leave the cache as it is
	}
	from, to := filepath.Join(priv, files[0]), filepath.Join(stubs, key)
	// The code under its own name in wazero's cache too, for a process
	// that cannot use the stub cache (a file system without hard links).
	if os.MkdirAll(filepath.Join(filepath.Dir(stubs), filepath.Dir(files[0])), 0o700) == nil {
		os.Link(from, filepath.Join(filepath.Dir(stubs), files[0]))
	}
	if os.MkdirAll(filepath.Dir(to), 0o700) == nil && os.Rename(from, to) == nil {
		m.stubKey = key
		// Which file of wazero's own cache holds the same code, for a
		// refill should the stub cache lose its file.
		if os.MkdirAll(filepath.Join(stubs, namesName), 0o700) == nil {
			atomicfile.Write(filepath.Join(stubs, namesName, filepath.Base(key)), []byte(files[0]), false)
		}
	}
	return m
}

// namesName is the stub cache's folder that maps each of its files (by
// its name) to the file of wazero's own cache that holds the same code:
// where install linked it.
const namesName = "names"

// refill files the code for key (a path relative to stubs, which a miss
// named) from wazero's own cache in dir, where install left the same
// code under the module's own name, and reports whether it did. Nothing
// is compiled: the name wazero gave the stub on this machine is the one
// install saw, and the file it maps to is the code compiled then.
func refill(dir, stubs, key string) bool {
	own, err := os.ReadFile(filepath.Join(stubs, namesName, filepath.Base(key)))
	if err != nil || len(own) > 4096 {
		return false
	}
	rel := string(own)
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	if !filepath.IsLocal(rel) || filepath.Dir(rel) != first || !isCodeDir(first) || filepath.Dir(key) != first {
		return false
	}
	tmp := filepath.Join(stubs, first, ".refill-"+filepath.Base(key))
	os.Remove(tmp)
	if os.MkdirAll(filepath.Join(stubs, first), 0o700) != nil || os.Link(filepath.Join(dir, rel), tmp) != nil {
		return false
	}
	if os.Rename(tmp, filepath.Join(stubs, key)) != nil {
		os.Remove(tmp)
		return false
	}
	return true
}

// clearCode removes the stub cache's files (its wazero folders), keeping
// what maps them to wazero's own cache.
func clearCode(stubs string) error {
	dirs, err := os.ReadDir(stubs)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if d.IsDir() && isCodeDir(d.Name()) {
			if err := os.RemoveAll(filepath.Join(stubs, d.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// compileWith compiles wasm in a new runtime whose wazero cache is dir.
func compileWith(ctx context.Context, dir string, wasm []byte) (*Module, error) {
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, err
	}
	return compileIn(ctx, cache, wasm)
}

// isCodeDir reports whether name is one of wazero's folders in its cache
// (wazero-VERSION-ARCH-OS), not a private folder of this file's.
func isCodeDir(name string) bool { return strings.HasPrefix(name, "wazero-") }

// linkCode hard-links every file of stubs' wazero folders into the same
// place under priv, and returns their paths relative to both.
func linkCode(stubs, priv string) (map[string]bool, error) {
	linked := map[string]bool{}
	dirs, err := os.ReadDir(stubs)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if !d.IsDir() || !isCodeDir(d.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(stubs, d.Name()))
		if err != nil {
			return nil, err
		}
		if err := os.Mkdir(filepath.Join(priv, d.Name()), 0o700); err != nil {
			return nil, err
		}
		for _, f := range files {
			if !f.Type().IsRegular() {
				continue
			}
			rel := filepath.Join(d.Name(), f.Name())
			if err := os.Link(filepath.Join(stubs, rel), filepath.Join(priv, rel)); err != nil {
				return nil, err
			}
			linked[rel] = true
		}
	}
	return linked, nil
}

// codeFiles lists the files of dir's wazero folders that are not in
// linked, as paths relative to dir.
func codeFiles(dir string, linked map[string]bool) []string {
	var out []string
	dirs, _ := os.ReadDir(dir)
	for _, d := range dirs {
		if !d.IsDir() || !isCodeDir(d.Name()) {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(dir, d.Name()))
		for _, f := range files {
			if rel := filepath.Join(d.Name(), f.Name()); !linked[rel] {
				out = append(out, rel)
			}
		}
	}
	return out
}

// sweep removes the private folders in stubs older than staleAfter.
func sweep(stubs string) {
	entries, _ := os.ReadDir(stubs)
	for _, e := range entries {
		if !e.IsDir() || !(strings.HasPrefix(e.Name(), loadPrefix) || strings.HasPrefix(e.Name(), installPrefix)) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			os.RemoveAll(filepath.Join(stubs, e.Name()))
		}
	}
}

// readOnly reports whether err is a refusal to write: a read-only mount,
// a folder this process may not write (Landlock's answer too), or a
// system call the sandbox does not allow (the isolated child's seccomp
// filter has no call that makes a file or folder).
func readOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOSYS)
}

// unwritable reports whether no wazero folder in stubs takes a new entry
// either: one that did would take the file of a miss. (stubs itself
// refused one: so wazero cannot make a folder there for its version.)
func unwritable(stubs string) bool {
	dirs, err := os.ReadDir(stubs)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if !d.IsDir() || !isCodeDir(d.Name()) {
			continue
		}
		p, err := os.MkdirTemp(filepath.Join(stubs, d.Name()), loadPrefix)
		if err == nil {
			os.Remove(p)
			return false
		}
		if !readOnly(err) {
			return false
		}
	}
	return true
}
