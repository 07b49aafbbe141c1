// Package tools is the logic of moat's read-only tools (list_dir, read_file,
// grep, glob, stat) as the WASI guest runs them.
//
// It is written against io/fs only, so the same code is compiled into the
// GOOS=wasip1 guest (which hands it guest/wasifs over a preopen the host has
// already confined and filtered) and unit-tested natively with
// testing/fstest.MapFS. The guest is one layer of several: the host has
// already validated the arguments and checked paths lexically, and its mount
// refuses symlink escapes and denied files. This package repeats the cheap
// checks (defence in depth) and otherwise concentrates on two things the
// other layers cannot give: output the model can act on (compact, sorted,
// with explicit notices when something was cut) and bounded work (memory
// flat in file size, caps on every listing).
//
// # Isolation
//
// Nothing here confines anything by itself. A symlink out of the root is
// only refused because the filesystem below refuses to resolve it, with the
// errno proto documents ("Errors of the filesystem"), which fsError turns
// into the model's message; a FIFO is only safe to meet because every tool
// checks the file type before opening. The package must stay free of os/exec, net and
// anything host-only, so that the guest stays small and has no way out.
package tools

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/moatdev/moat/guest/proto"
)

// Run executes one tool call against fsys, whose root is the sandbox root.
// It never panics: a bug in a tool becomes an error response, because a
// crashed guest would cost the host a fresh instance and tell the model
// nothing. The response always carries req.ID.
func Run(fsys fs.FS, req proto.Request) proto.Response {
	return NewHandlers().Run(fsys, req)
}

// Handlers is the table of the tools' handlers, built once (NewHandlers)
// for all the calls a guest serves: built for each call, with the registry
// it is built from, it was most of what a small call allocated (3.7 of
// 3.9 KB a stat) and a third of its time in the guest's allocator.
type Handlers struct {
	byName map[string]handler
	// internal are the tools whose answer is a share's JSON (the
	// registry's Internal rows), carried as it is.
	internal map[string]bool
}

// NewHandlers builds the table: every tool handlerOf runs.
func NewHandlers() *Handlers {
	t := &Handlers{byName: map[string]handler{}, internal: map[string]bool{}}
	for _, d := range proto.Registry() {
		if h, ok := handlerOf(d.Name); ok {
			t.byName[d.Name], t.internal[d.Name] = h, d.Is(proto.Internal)
		}
	}
	return t
}

// Run is the package's Run with the table built.
func (t *Handlers) Run(fsys fs.FS, req proto.Request) (resp proto.Response) {
	defer func() {
		if r := recover(); r != nil {
			resp = errResponse(sprintf("error: internal error in %s: %v", req.Tool, panicText(r)))
		}
		resp.ID = req.ID
	}()
	h, ok := t.byName[req.Tool]
	if !ok {
		return errResponse(errorf("unknown tool: %s", req.Tool).Error())
	}
	text, err := h(fsys, req)
	if err != nil {
		return errResponse(err.Error())
	}
	if t.internal[req.Tool] {
		return proto.Response{Shard: []byte(text)} // a share's JSON already: carried as it is
	}
	return proto.Response{Text: text}
}

// handler runs one call and returns the text the model reads, or an error
// whose text it reads instead.
type handler func(fsys fs.FS, req proto.Request) (string, error)

// handlerOf is the function that runs the named tool: the guest runs
// every row of proto's registry that is not a write proposal (the host's
// gate handles those, and the guest never sees them), each by the function
// below that takes its argument struct.
func handlerOf(name string) (handler, bool) {
	d, ok := proto.Lookup(name)
	if !ok || d.Is(proto.Writes) {
		return nil, false
	}
	args := d.NewArgs()
	for _, r := range []typed{
		tool(listDir),
		tool(readFile),
		tool(grep),
		tool(glob),
		tool(func(fsys fs.FS, a proto.StatArgs, _ proto.Limits) (string, error) { return stat(fsys, a) }),
		tool(grepShard),
		tool(globShard),
	} {
		if r.takes(args) {
			return r.run, true
		}
	}
	return nil, false
}

// Handles reports whether the guest runs the named tool.
func Handles(name string) bool {
	_, ok := handlerOf(name)
	return ok
}

// typed is a handler and the argument struct it takes.
type typed struct {
	run handler
	// takes reports whether args points to the handler's argument struct.
	takes func(args any) bool
}

// tool makes a handler of a tool's function: it decodes the arguments into
// the tool's argument struct first.
func tool[A any](run func(fs.FS, A, proto.Limits) (string, error)) typed {
	return typed{
		run: func(fsys fs.FS, req proto.Request) (string, error) {
			var a A
			if err := decodeArgs(req, &a); err != nil {
				return "", err
			}
			return run(fsys, a, req.Limits)
		},
		takes: func(args any) bool { _, ok := args.(*A); return ok },
	}
}

func errResponse(text string) proto.Response {
	return proto.Response{Text: text, IsError: true}
}

// toolError is an error whose text is already the exact message the model
// reads (it starts with "error: ").
type toolError string

func (e toolError) Error() string { return string(e) }

func errorf(format string, args ...any) error {
	return toolError(sprintf("error: "+format, args...))
}

// panicText describes a recovered panic value.
func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return "panic"
}

// decodeArgs decodes the arguments again even though the host validated
// them: the guest must not trust that the host it runs under is the one
// that did the validation.
func decodeArgs(req proto.Request, v any) error {
	if err := proto.DecodeArgs(req.Args, v); err != nil {
		return errorf("invalid arguments for %s: %v", req.Tool, err)
	}
	return nil
}

// cleanPath turns the model's path into an fs.FS path. The host refuses
// escaping paths already; this is the second look, so that the guest is safe
// even when handed a filesystem that would honour "..".
func cleanPath(given string) (string, error) {
	p := proto.PathName(given) // a name shown quoted, passed back as shown
	if p == "" {
		return ".", nil
	}
	if strings.IndexByte(p, 0) >= 0 || strings.HasPrefix(p, "/") {
		return "", errorf("path escapes the sandbox: %s", given)
	}
	c := path.Clean(p)
	c = strings.TrimPrefix(c, "./")
	if c == ".." || strings.HasPrefix(c, "../") || !proto.ValidPath(c) {
		return "", errorf("path escapes the sandbox: %s", given)
	}
	return c, nil
}

// displayPath is the path as the model gave it, or "." when it gave none,
// so that messages read naturally.
func displayPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// fsError maps a filesystem error to the message the model reads; the
// errnos and what they mean are proto's ("Errors of the filesystem"). The
// order matters: the specific reasons (a symlink out of the root, a loop)
// come before the generic ones they may also satisfy.
func fsError(tool, p string, err error) error {
	var te toolError
	if errors.As(err, &te) {
		return te
	}
	p = displayPath(p)
	switch {
	case isEscape(err):
		return errorf("path escapes the sandbox through a symlink: %s", p)
	case errors.Is(err, proto.ErrnoLoop):
		return errorf("too many levels of symbolic links: %s", p)
	case errors.Is(err, syscall.ENOTDIR):
		return errorf("not a folder: %s", p)
	case errors.Is(err, syscall.EISDIR):
		return errorf("%s is a folder; use list_dir", p)
	case errors.Is(err, proto.ErrnoSpecial):
		return errorf("not a regular file: %s (named pipe, socket or device)", p)
	case errors.Is(err, proto.ErrnoOSDenied):
		return errorf("%s: %s (its mode or owner does not let moat read it)", osDenied, p)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, proto.ErrnoDenied):
		return errorf("access denied by the sandbox policy: %s", p)
	case errors.Is(err, fs.ErrNotExist):
		return errorf("no such file or directory: %s", p)
	}
	return errorf("%s %s: %s", tool, p, bareError(err))
}

// osDenied says that the host's file system, not moat's policy, refused an
// access (proto.ErrnoOSDenied).
const osDenied = "permission denied by the file system"

// isEscape recognises the host mount's refusal of a path that leaves the
// root (proto.ErrnoEscape), or EXDEV from a filesystem that has it (a
// native one in tests).
func isEscape(err error) bool {
	return errors.Is(err, proto.ErrnoEscape) || errors.Is(err, syscall.EXDEV)
}

// bareError strips the path wrappers from err: their paths are guest or
// host paths the model must not see (and that would leak the host layout).
func bareError(err error) string {
	for {
		switch e := err.(type) {
		case *fs.PathError:
			err = e.Err
			continue
		case interface{ Unwrap() error }:
			// os.LinkError and os.SyscallError carry paths or call names;
			// the innermost error is what the model can act on.
			if inner := e.Unwrap(); inner != nil {
				err = inner
				continue
			}
		}
		return err.Error()
	}
}

// fileKind names a non-regular file type the way messages show it.
func fileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "file"
	case t&fs.ModeDir != 0:
		return "folder"
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0, t&fs.ModeCharDevice != 0:
		return "device"
	default:
		return "special file"
	}
}

// humanSize renders n bytes in moat's one unit (SI: a KB is 1000 bytes).
func humanSize(n int64) string { return proto.FormatSize(n) }
