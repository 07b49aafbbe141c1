package confine

import (
	"context"
	"path"
	"sort"
	"strings"
	"sync"
)

// Observing a guest's calls: what each call opened, listed and described,
// noted where the guest's every open, listing and stat goes through (its
// mount, and the batch read), so that a recording (--record-files) can
// take every file a call depended on without each tool having to say
// which. Only what the mount allowed is noted: a denied, escaping or
// special path fails before it is noted, so nothing is ever noted that the
// guest could not see.

// TouchKind says what a call did to a path; the kinds are bits, and one
// path may have several.
type TouchKind uint8

const (
	// Opened: opened as a regular file (the guest may read any of it).
	Opened TouchKind = 1 << iota
	// Listed: a folder whose names were read.
	Listed
	// Described: a stat or lstat answered (its kind, size and time).
	Described
)

// Touch is one path a call touched: as the guest named it, cleaned,
// relative to the root (it may go through symbolic links inside the root),
// and what was done to it.
type Touch struct {
	Path string    `json:"path"`
	Kind TouchKind `json:"kind"`
}

// Observer is told of every path a guest's call touches. It is called
// from the goroutines the calls run on (a split grep runs several at
// once), so it must be safe for concurrent use.
type Observer interface {
	Touched(path string, kind TouchKind)
}

// Touches is an Observer that keeps the set: each path once, with every
// kind it was touched as.
type Touches struct {
	mu sync.Mutex
	m  map[string]TouchKind
}

// Touched notes one path.
func (t *Touches) Touched(p string, k TouchKind) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]TouchKind{}
	}
	t.m[p] |= k
}

// List is the set, sorted by path.
func (t *Touches) List() []Touch {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Touch, 0, len(t.m))
	for p, k := range t.m {
		out = append(out, Touch{Path: p, Kind: k})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

type observerKey struct{}

// WithObserver is ctx for a call whose touches o is told of: the runner
// gives it to the call's mount (MountControl.Observe), and the isolated
// child's client asks the child for them and passes them on.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// ObserverFrom is the Observer WithObserver put in ctx, or nil.
func ObserverFrom(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}

// observerBox holds a mount's observer (an interface cannot be stored in
// an atomic.Pointer itself).
type observerBox struct{ o Observer }

// Observe tells o of every path the mount's guest touches from now on;
// nil stops it. The runner sets it for the duration of one call (an
// instance runs one call at a time).
func (c *MountControl) Observe(o Observer) {
	if o == nil {
		c.mt.obs.Store(nil)
		return
	}
	c.mt.obs.Store(&observerBox{o})
}

// note tells the mount's observer, if any, of path p (the guest's form,
// as guestPath gives it).
func (m *mount) note(p string, k TouchKind) {
	b := m.obs.Load()
	if b == nil {
		return
	}
	p = path.Clean(strings.TrimLeft(p, "/"))
	if p == "" {
		p = "."
	}
	b.o.Touched(p, k)
}

// noteOpen notes a file the guest opened: a regular file at once, a
// folder when it is first listed.
func (m *mount) noteOpen(name string, f *file_) {
	if m.obs.Load() == nil {
		return
	}
	fi, err := f.f.Stat()
	if err != nil {
		return
	}
	switch {
	case fi.Mode().IsRegular():
		m.note(name, Opened)
	case fi.IsDir():
		f.onList = func() { m.note(name, Listed) }
	}
}
