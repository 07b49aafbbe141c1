package confine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/moatdev/moat/host/atomicfile"
	"github.com/moatdev/moat/host/redact"
)

// The findings cache. What an FS found in its files (view.go) can be
// remembered past its life: by a later process (a one-shot moat tool
// call finds in every file it reads, and most of its time went there),
// and by the isolated child's parent, which keeps the cache for it.
//
// The cache of a sandbox is one file (CacheName: a hash of the
// redactor's rules, the program's build and the roots, which the file
// holds too), of entries each a file's identity as fileKey has it
// (device, inode, size, modification and change times in ns, and the
// name it was opened by, which decides its shape), its root's place
// among the sandbox's, and what was found in it. Only what findings.put
// remembers is kept: a settled file, found in to its end. The file is
// cacheMagic, cacheVersion, the key (32 bytes), the entries
// (appendEntries) and the SHA-256 of all that.
//
// A file that says "no secret here" where there is one would serve the
// secret, so the cache is trusted as the compile cache next to it is
// (native code moat runs): only a regular file this user owns that no
// one else can write, not reached through a symbolic link, whose every
// byte its checksum covers, of this format's version and of the key its
// name says; any other is ignored, and replaced by the next save. A
// file changed since it was found in has another identity, so an old
// cache file (a copy kept, say) holds nothing that applies to it. It is
// written whole to a temporary file and renamed over the old one: two
// processes saving at once leave one's, never a mixture.

// Limits of the findings cache: the entries kept (the oldest dropped
// past it), and, for a file read back, its size and an entry's name and
// rule lengths.
const (
	maxCached     = maxRemembered
	maxCacheFile  = 256 << 20
	maxCachedName = 4096
	maxRuleName   = 256
)

// cacheMagic and cacheVersion start a findings cache file; a file of
// another version is not read.
const (
	cacheMagic   = "moat findings\n"
	cacheVersion = 1
)

// Findings are files' findings as an FS remembered them, for another to
// remember: in a later process (LoadCache, SaveCache), or in the isolated
// child's parent ([FS.Fresh], [FS.Recall], sent as MarshalBinary's bytes).
type Findings struct {
	entries []entry
}

// entry is one file's findings.
type entry struct {
	root  int // the file's root's place among the sandbox's (0 with one)
	key   fileKey
	found []redact.Finding
}

// Len is how many files' findings fd holds.
func (fd Findings) Len() int { return len(fd.entries) }

// Add adds later findings to fd; a file's latest are the ones kept.
func (fd *Findings) Add(later Findings) {
	fd.entries = append(fd.entries, later.entries...)
	if len(fd.entries) > 2*maxCached {
		fd.entries = compact(fd.entries)
	}
}

// compact is entries with each file's latest only, the oldest left out
// past maxCached, oldest first.
func compact(entries []entry) []entry {
	type id struct {
		root int
		key  fileKey
	}
	seen := make(map[id]bool, min(len(entries), maxCached))
	var keep []entry
	for i := len(entries) - 1; i >= 0 && len(keep) < maxCached; i-- {
		e := entries[i]
		if seen[id{e.root, e.key}] {
			continue
		}
		seen[id{e.root, e.key}] = true
		keep = append(keep, e)
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	return keep
}

// MarshalBinary encodes fd; an entry whose name is longer than
// maxCachedName is left out.
func (fd Findings) MarshalBinary() ([]byte, error) {
	return appendEntries(nil, fd.entries), nil
}

// UnmarshalBinary decodes what MarshalBinary encoded, checking every
// entry (decodeEntries).
func (fd *Findings) UnmarshalBinary(b []byte) error {
	e, err := decodeEntries(b)
	if err != nil {
		return err
	}
	fd.entries = e
	return nil
}

func appendEntries(b []byte, entries []entry) []byte {
	n := 0
	for _, e := range entries {
		if len(e.key.name) <= maxCachedName {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for _, e := range entries {
		if len(e.key.name) > maxCachedName {
			continue
		}
		k := e.key
		b = binary.AppendUvarint(b, uint64(e.root))
		b = binary.AppendUvarint(b, k.dev)
		b = binary.AppendUvarint(b, k.ino)
		b = binary.AppendUvarint(b, k.size)
		b = binary.AppendVarint(b, k.mtime)
		b = binary.AppendVarint(b, k.ctime)
		b = binary.AppendUvarint(b, uint64(len(k.name)))
		b = append(b, k.name...)
		b = binary.AppendUvarint(b, uint64(len(e.found)))
		for _, f := range e.found {
			b = binary.AppendUvarint(b, uint64(len(f.Rule)))
			b = append(b, f.Rule...)
			b = binary.AppendUvarint(b, uint64(f.Start))
			b = binary.AppendUvarint(b, uint64(f.End-f.Start))
		}
	}
	return b
}

// errCache is a findings cache (or a child's findings) not to be trusted.
var errCache = errors.New("confine: not a findings cache of this user's, format and key")

// decoder reads what appendEntries wrote; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint(max uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > max {
		d.err = errCache
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCache
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(max uint64) []byte {
	n := d.uvarint(max)
	if d.err != nil || uint64(len(d.b)) < n {
		d.err = errCache
		d.b = nil
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

// decodeEntries reads entries, each checked as far as it can be: its
// root among MaxRoots, its name at most maxCachedName bytes, at most
// maxRememberedFindings findings, each within the file's size, in order
// and none overlapping the next (as the view needs them), with a rule's
// name of at most maxRuleName bytes. Anything else, or bytes left over,
// fails the whole.
func decodeEntries(b []byte) ([]entry, error) {
	d := &decoder{b: b}
	n := d.uvarint(maxCached)
	entries := make([]entry, 0, n)
	rules := map[string]string{} // each rule's name made a string once
	for range n {
		var e entry
		e.root = int(d.uvarint(MaxRoots - 1))
		k := &e.key
		k.dev = d.uvarint(1<<64 - 1)
		k.ino = d.uvarint(1<<64 - 1)
		k.size = d.uvarint(1<<63 - 1)
		k.mtime = d.varint()
		k.ctime = d.varint()
		k.name = string(d.bytes(maxCachedName))
		nf := d.uvarint(maxRememberedFindings)
		if d.err != nil {
			return nil, d.err
		}
		if nf > 0 {
			e.found = make([]redact.Finding, 0, nf)
		}
		end := uint64(0)
		for range nf {
			rb := d.bytes(maxRuleName)
			start := d.uvarint(k.size)
			length := d.uvarint(k.size)
			if d.err != nil || len(rb) == 0 || start < end || length == 0 || start+length > k.size || start+length > math.MaxInt {
				return nil, errCache
			}
			rule, ok := rules[string(rb)]
			if !ok {
				rule = string(rb)
				rules[rule] = rule
			}
			end = start + length
			e.found = append(e.found, redact.Finding{Rule: rule, Start: int(start), End: int(end)})
		}
		entries = append(entries, e)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCache
	}
	return entries, nil
}

// CacheName is the name of the findings cache file of a sandbox of dirs
// (their paths and labels, in order) whose files are found in by the
// rules of the given digest (redact.Redactor's Digest), in the program
// of the given build (its build ID): the hex of a hash of all of them
// and of the cache's version, which the file holds too. build must
// change with any change of the program's code; "" is no build known,
// and so no name ("": no cache).
func CacheName(rules [32]byte, build string, dirs []Dir) string {
	if build == "" {
		return ""
	}
	h := sha256.New()
	put := func(s string) {
		h.Write(binary.AppendUvarint(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	put(cacheMagic)
	h.Write([]byte{cacheVersion})
	h.Write(rules[:])
	put(build)
	for _, d := range dirs {
		put(d.Label)
		put(d.Path)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// keyOfName is the key a cache file's name says.
func keyOfName(path string) ([32]byte, error) {
	var k [32]byte
	b, err := hex.DecodeString(filepath.Base(path))
	if err != nil || len(b) != len(k) {
		return k, fmt.Errorf("confine: %q is not a findings cache's name", filepath.Base(path))
	}
	copy(k[:], b)
	return k, nil
}

// LoadCache reads the findings cache file at path (named by CacheName):
// an error, and nothing, for a file that is not there or is not to be
// trusted (the doc at the top says which).
func LoadCache(path string) (Findings, error) {
	key, err := keyOfName(path)
	if err != nil {
		return Findings{}, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNofollow|oNonblock, 0)
	if err != nil {
		return Findings{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Findings{}, err
	}
	if !fi.Mode().IsRegular() || !private(fi) || fi.Size() > maxCacheFile {
		return Findings{}, fmt.Errorf("%w: %s is not a regular file of this user's that only it can write", errCache, path)
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return Findings{}, err
	}
	head := len(cacheMagic) + 1 + len(key)
	if len(b) < head+sha256.Size || string(b[:len(cacheMagic)]) != cacheMagic || b[len(cacheMagic)] != cacheVersion ||
		!bytes.Equal(b[len(cacheMagic)+1:head], key[:]) {
		return Findings{}, fmt.Errorf("%w: %s has another format, version or key", errCache, path)
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return Findings{}, fmt.Errorf("%w: %s is damaged", errCache, path)
	}
	entries, err := decodeEntries(body[head:])
	if err != nil {
		return Findings{}, fmt.Errorf("%w: %s", err, path)
	}
	return Findings{entries: entries}, nil
}

// SaveCache adds fresh to the findings cache file at path (named by
// CacheName), in a folder it makes (0700) if need be, which must be this
// user's and writable by no one else: the file's entries that are to be
// trusted, then fresh's, the oldest left out past maxCached, are written
// to a temporary file (0600) that is renamed over it. With nothing fresh
// nothing is written.
func SaveCache(path string, fresh Findings) error {
	if fresh.Len() == 0 {
		return nil
	}
	key, err := keyOfName(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || !private(fi) {
		return fmt.Errorf("confine: %s is not a folder of this user's that only it can write", dir)
	}
	old, _ := LoadCache(path) // one not to be trusted is replaced
	all := compact(append(old.entries, fresh.entries...))
	b := append([]byte(cacheMagic), cacheVersion)
	b = append(b, key[:]...)
	b = appendEntries(b, all)
	sum := sha256.Sum256(b)
	b = append(b, sum[:]...)
	return atomicfile.Write(path, b, false)
}

// Fresh is what f found, and remembered, since the last call (a settled
// file found in to its end; findings.put), for another to remember.
func (f *FS) Fresh() Findings {
	var fd Findings
	for i, s := range f.each() {
		if s.seen != nil {
			fd.entries = s.seen.fresh(i, fd.entries)
		}
	}
	return fd
}

// Recall makes f remember fd's findings as its own (and not as fresh):
// a file of the same identity opened since is served by them, not found
// in again. Findings of a root f does not have are left out.
func (f *FS) Recall(fd Findings) {
	subs := f.each()
	for _, e := range fd.entries {
		if e.root < len(subs) && subs[e.root].seen != nil {
			subs[e.root].seen.recall(e.key, memo{found: e.found})
		}
	}
}

// each is f's roots' FSes, in order: its subs, or f itself.
func (f *FS) each() []*FS {
	if f.subs != nil {
		return f.subs
	}
	return []*FS{f}
}
