package tools

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/wasifs"
)

// treeFS is the layout most tests share: files, folders, every kind of
// special file, and symlinks inside, outside, dangling and looping.
func treeFS() errFS {
	return errFS{
		MapFS: fstest.MapFS{
			"README.md":      file("# moat\nread me\n"),
			"src/main.go":    file("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"),
			"src/util.go":    file("package main\n"),
			"empty":          dir(),
			"fifo":           special(fs.ModeNamedPipe),
			"sock":           special(fs.ModeSocket),
			"dev":            special(fs.ModeDevice | fs.ModeCharDevice),
			"to-readme":      link("README.md"),
			"to-src":         link("src"),
			"to-passwd":      link("/etc/passwd"),
			"dangling":       link("nowhere"),
			"escape":         link("../outside"),
			"zz/deep/a.txt":  file("a\n"),
			"empty.txt":      file(""),
			"image.png":      file("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
			"program":        file("\x7fELF\x02\x01\x01\x00\x00\x00"),
			"blob":           file("abc\x00def"),
			"latin1.txt":     file("caf\xe9 cr\xe8me\n"),
			"utf8.txt":       file("héllo wörld\n"),
			"crlf.txt":       file("one\r\ntwo\r\n"),
			"no-newline.txt": file("one\ntwo"),
		},
		errs: map[string]error{"escape": syscall.EXDEV},
	}
}

func TestListDir(t *testing.T) {
	fsys := treeFS()
	runCases(t, fsys, proto.ListDir, []toolCase{
		{"root", map[string]any{"path": "."}, proto.Limits{}, strings.Join([]string{
			"README.md", "blob", "crlf.txt", "dangling -> nowhere", "dev (device)", "empty/", "empty.txt",
			"escape -> (outside the sandbox)", "fifo (named pipe)", "image.png", "latin1.txt", "no-newline.txt",
			"program", "sock (socket)", "src/", "to-passwd -> /etc/passwd", "to-readme -> README.md",
			"to-src -> src", "utf8.txt", "zz/"}, "\n")},
		{"default path", map[string]any{}, proto.Limits{MaxResults: 3}, "README.md\nblob\ncrlf.txt\ndangling -> nowhere\ndev (device)\nempty/\nempty.txt\nescape -> (outside the sandbox)\nfifo (named pipe)\nimage.png\nlatin1.txt\nno-newline.txt\nprogram\nsock (socket)\nsrc/\nto-passwd -> /etc/passwd\nto-readme -> README.md\nto-src -> src\nutf8.txt\nzz/"},
		{"sub", map[string]any{"path": "./src/"}, proto.Limits{}, "main.go\nutil.go"},
		{"through a symlink", map[string]any{"path": "to-src"}, proto.Limits{}, "main.go\nutil.go"},
		{"empty", map[string]any{"path": "empty"}, proto.Limits{}, "(empty folder)"},
		{"file", map[string]any{"path": "README.md"}, proto.Limits{}, "error: not a folder: README.md"},
		{"fifo", map[string]any{"path": "fifo"}, proto.Limits{}, "error: not a folder: fifo"},
		{"missing", map[string]any{"path": "nope"}, proto.Limits{}, "error: no such file or directory: nope"},
		{"escape", map[string]any{"path": "escape"}, proto.Limits{}, "error: path escapes the sandbox through a symlink: escape"},
	})
}

// sizes adds each regular file's size and every entry's own time (a link's,
// not its target's), and changes nothing else of the line.
func TestListDirSizes(t *testing.T) {
	fsys := fstest.MapFS{
		"small.txt": file("hello\n"),
		"big.bin":   file(strings.Repeat("x", 1500)),
		"sub":       dir(),
		"to-small":  link("small.txt"),
	}
	when := mtime().UTC().Format("2006-01-02T15:04:05Z")
	runCases(t, fsys, proto.ListDir, []toolCase{
		{"sizes", map[string]any{"path": ".", "sizes": true}, proto.Limits{}, strings.Join([]string{
			"big.bin  (1500 bytes, 1.5 KB, " + when + ")",
			"small.txt  (6 bytes, " + when + ")",
			"sub/  (" + when + ")",
			"to-small -> small.txt  (" + when + ")"}, "\n")},
		{"without", map[string]any{"path": ".", "sizes": false}, proto.Limits{}, "big.bin\nsmall.txt\nsub/\nto-small -> small.txt"},
	})
}

func TestListDirCap(t *testing.T) {
	fsys := fstest.MapFS{}
	const n = maxListEntries + 234
	for i := range n {
		fsys[fmt.Sprintf("d/f%05d", n-i)] = file("") // inserted in reverse order
	}
	got := call(t, fsys, proto.ListDir, map[string]any{"path": "d"}, proto.Limits{}).Text
	lines := strings.Split(got, "\n")
	if len(lines) != maxListEntries+2 || lines[0] != "f00001" || lines[maxListEntries-1] != fmt.Sprintf("f%05d", maxListEntries) ||
		lines[maxListEntries] != "... 234 more entries" || lines[maxListEntries+1] != "[offset 1001 lists the next 234]" {
		t.Errorf("got %d lines: first %q, last three %q", len(lines), lines[0], lines[len(lines)-3:])
	}
	// A larger host cap raises it; a smaller one does not lower it.
	got = call(t, fsys, proto.ListDir, map[string]any{"path": "d"}, proto.Limits{MaxResults: maxListEntries + 200}).Text
	if !strings.HasSuffix(got, "\n... 34 more entries\n[offset 1201 lists the next 34]") {
		t.Errorf("MaxResults above the cap: got ...%q", got[len(got)-40:])
	}
	if got := call(t, fsys, proto.ListDir, map[string]any{"path": "d"}, proto.Limits{MaxResults: 2}).Text; strings.Count(got, "\n") != maxListEntries+1 {
		t.Errorf("MaxResults 2 lowered the list_dir cap: %d lines", strings.Count(got, "\n"))
	}
}

// TestListDirPages pages through a folder wider than a page: the pages
// join up to every entry once, in name order, whatever order the folder
// lists them in, and an offset past the end says how many there are.
func TestListDirPages(t *testing.T) {
	fsys := fstest.MapFS{}
	const n = 3*maxListEntries + 17
	var want []string
	for i := range n {
		fsys[fmt.Sprintf("d/f%05d", (i*7919)%n)] = file("") // a scrambled order
		want = append(want, fmt.Sprintf("f%05d", i))
	}
	if all := listPages(t, fsys, "d"); !slices.Equal(all, want) {
		t.Fatalf("pages hold %d entries, want %d (first %q)", len(all), n, all[:min(3, len(all))])
	}
	if got := call(t, fsys, proto.ListDir, map[string]any{"path": "d", "offset": n + 1}, proto.Limits{}).Text; got != fmt.Sprintf("(no entries from offset %d: the folder has %d)", n+1, n) {
		t.Errorf("past the end: %q", got)
	}
	if got := call(t, fsys, proto.ListDir, map[string]any{"path": "d", "offset": -1}, proto.Limits{}).Text; !strings.Contains(got, "offset must be 1 or more") {
		t.Errorf("negative offset: %q", got)
	}
}

// TestListDirPagesOnDisk pages through a wide folder on disk through
// wasifs (in the guest, its ScanDir straight from fd_readdir's buffer):
// names that share their first 8 bytes and more, names that are prefixes
// of others, and folders among the files all come in name order.
func TestListDirPagesOnDisk(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "d")
	os.Mkdir(dir, 0o755)
	var want []string
	for i := range 3*maxListEntries + 17 {
		name := fmt.Sprintf("a-shared-prefix-%d", (i*7919)%4000)
		switch i % 5 {
		case 1:
			name = strings.Repeat("x", 1+i%12) // x, xx, ... each a prefix of the next
		case 2:
			name = fmt.Sprintf("x%d", i)
		}
		if slices.Contains(want, name) || slices.Contains(want, name+"/") {
			continue
		}
		if i%9 == 0 {
			os.Mkdir(filepath.Join(dir, name), 0o755)
			want = append(want, name+"/")
			continue
		}
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
		want = append(want, name)
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/")) })
	if all := listPages(t, wasifs.New(root), "d"); !slices.Equal(all, want) {
		for i := range min(len(all), len(want)) {
			if all[i] != want[i] {
				t.Fatalf("pages hold %d entries, want %d; entry %d is %q, want %q", len(all), len(want), i, all[i], want[i])
			}
		}
		t.Fatalf("pages hold %d entries, want %d", len(all), len(want))
	}
}

// listPages is every line of list_dir's pages of folder p, the pages'
// notes left out.
func listPages(t *testing.T, fsys fs.FS, p string) []string {
	t.Helper()
	var all []string
	for offset := 1; ; {
		got := call(t, fsys, proto.ListDir, map[string]any{"path": p, "offset": offset}, proto.Limits{}).Text
		lines := strings.Split(got, "\n")
		if len(lines) > 2 && strings.HasPrefix(lines[len(lines)-1], "[offset ") {
			all = append(all, lines[:len(lines)-2]...)
			if _, err := fmt.Sscanf(lines[len(lines)-1], "[offset %d", &offset); err != nil {
				t.Fatalf("page note %q: %v", lines[len(lines)-1], err)
			}
			continue
		}
		return append(all, lines...)
	}
}

func TestReadFile(t *testing.T) {
	fsys := treeFS()
	fsys.MapFS["ten.txt"] = file("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	fsys.MapFS["long-first.txt"] = file(strings.Repeat("x", 30) + "\nshort\n")
	fsys.MapFS["euro.txt"] = file("€€€€€€€€\n")
	runCases(t, fsys, proto.ReadFile, []toolCase{
		{"whole", map[string]any{"path": "README.md"}, proto.Limits{}, "# moat\nread me\n"},
		{"dot slash", map[string]any{"path": "./src/util.go"}, proto.Limits{}, "package main\n"},
		{"symlink", map[string]any{"path": "to-readme"}, proto.Limits{}, "# moat\nread me\n"},
		{"no final newline", map[string]any{"path": "no-newline.txt"}, proto.Limits{}, "one\ntwo"},
		{"crlf kept", map[string]any{"path": "crlf.txt"}, proto.Limits{}, "one\r\ntwo\r\n"},
		{"utf8", map[string]any{"path": "utf8.txt"}, proto.Limits{}, "héllo wörld\n"},
		{"latin1 is text", map[string]any{"path": "latin1.txt"}, proto.Limits{}, "caf\xe9 cr\xe8me\n"},
		{"empty", map[string]any{"path": "empty.txt"}, proto.Limits{}, "(empty file)"},
		{"offset", map[string]any{"path": "ten.txt", "offset": 9}, proto.Limits{}, "9\n10\n"},
		{"offset last", map[string]any{"path": "no-newline.txt", "offset": 2}, proto.Limits{}, "two"},
		{"offset and limit", map[string]any{"path": "ten.txt", "offset": 3, "limit": 2}, proto.Limits{},
			"3\n4\n\n[showed lines 3-4; the file has more, call read_file with offset=5]"},
		{"limit to the end", map[string]any{"path": "ten.txt", "offset": 9, "limit": 2}, proto.Limits{}, "9\n10\n"},
		{"limit past the end", map[string]any{"path": "ten.txt", "offset": 9, "limit": 5}, proto.Limits{}, "9\n10\n"},
		{"limit no newline", map[string]any{"path": "no-newline.txt", "limit": 1}, proto.Limits{},
			"one\n\n[showed lines 1-1; the file has more, call read_file with offset=2]"},
		{"offset past end", map[string]any{"path": "ten.txt", "offset": 11}, proto.Limits{},
			"error: offset 11 is past the end of ten.txt (10 lines)"},
		{"offset far past end", map[string]any{"path": "no-newline.txt", "offset": 99}, proto.Limits{},
			"error: offset 99 is past the end of no-newline.txt (2 lines)"},
		{"budget", map[string]any{"path": "ten.txt", "offset": 2}, proto.Limits{MaxReadBytes: 7},
			"2\n3\n4\n\n[truncated: showed lines 2-4 of ten.txt (6 B of 21 B); call read_file with offset=5 to read on]"},
		{"budget exact", map[string]any{"path": "ten.txt", "offset": 9}, proto.Limits{MaxReadBytes: 5}, "9\n10\n"},
		{"budget and limit", map[string]any{"path": "ten.txt", "limit": 2}, proto.Limits{MaxReadBytes: 3},
			"1\n\n[truncated: showed lines 1-1 of ten.txt (2 B of 21 B); call read_file with offset=2 to read on]"},
		{"first line over budget", map[string]any{"path": "long-first.txt"}, proto.Limits{MaxReadBytes: 10},
			"xxxxxxxxxx\n\n[truncated: line 1 of long-first.txt is longer than the read budget; showed its first 10 B]"},
		{"cut at a rune", map[string]any{"path": "euro.txt"}, proto.Limits{MaxReadBytes: 8},
			"€€\n\n[truncated: line 1 of euro.txt is longer than the read budget; showed its first 6 B]"},
		{"png", map[string]any{"path": "image.png"}, proto.Limits{}, "error: binary file: image.png (16 B, PNG image)"},
		{"elf", map[string]any{"path": "program"}, proto.Limits{}, "error: binary file: program (10 B, ELF executable)"},
		{"nul", map[string]any{"path": "blob"}, proto.Limits{}, "error: binary file: blob (7 B, binary data)"},
		{"fifo", map[string]any{"path": "fifo"}, proto.Limits{}, "error: not a regular file: fifo (named pipe)"},
		{"socket", map[string]any{"path": "sock"}, proto.Limits{}, "error: not a regular file: sock (socket)"},
		{"device", map[string]any{"path": "dev"}, proto.Limits{}, "error: not a regular file: dev (device)"},
		{"folder", map[string]any{"path": "src"}, proto.Limits{}, "error: src is a folder; use list_dir"},
		{"root", map[string]any{"path": ""}, proto.Limits{}, "error: . is a folder; use list_dir"},
		{"missing", map[string]any{"path": "src/nope.go"}, proto.Limits{}, "error: no such file or directory: src/nope.go"},
		{"dangling", map[string]any{"path": "dangling"}, proto.Limits{}, "error: no such file or directory: dangling"},
		{"escape", map[string]any{"path": "escape"}, proto.Limits{}, "error: path escapes the sandbox through a symlink: escape"},
	})
}

// openCountFS fails the test if a path is opened: special files must be
// refused on their Stat alone, because opening a FIFO blocks.
type openCountFS struct {
	fstest.MapFS
	t      *testing.T
	forbid string
}

func (o openCountFS) Open(name string) (fs.File, error) {
	if name == o.forbid {
		o.t.Errorf("%s was opened", name)
	}
	return o.MapFS.Open(name)
}

func TestSpecialFilesAreNotOpened(t *testing.T) {
	fsys := openCountFS{MapFS: treeFS().MapFS, t: t, forbid: "fifo"}
	call(t, fsys, proto.ReadFile, map[string]any{"path": "fifo"}, proto.Limits{})
	call(t, fsys, proto.ListDir, map[string]any{"path": "fifo"}, proto.Limits{})
	call(t, fsys, proto.Grep, map[string]any{"pattern": "x"}, proto.Limits{})
	call(t, fsys, proto.Grep, map[string]any{"pattern": "x", "path": "fifo"}, proto.Limits{})
}

func TestReadFileBinaryKinds(t *testing.T) {
	for head, kind := range map[string]string{
		"\x89PNG\r\n\x1a\n":             "PNG image",
		"\xff\xd8\xff\xe0":              "JPEG image",
		"GIF89a\x00":                    "GIF image",
		"%PDF-1.7\n\x00":                "PDF document",
		"PK\x03\x04\x00":                "ZIP archive",
		"\x1f\x8b\x08\x00":              "gzip data",
		"\x00asm\x01\x00":               "WebAssembly module",
		"SQLite format 3\x00":           "SQLite database",
		strings.Repeat("\xff\xfe", 100): "binary data",
	} {
		fsys := fstest.MapFS{"f": file(head)}
		got := call(t, fsys, proto.ReadFile, map[string]any{"path": "f"}, proto.Limits{}).Text
		if want := fmt.Sprintf("error: binary file: f (%d B, %s)", len(head), kind); got != want {
			t.Errorf("%q: got %q, want %q", head, got, want)
		}
	}
}

func TestStat(t *testing.T) {
	fsys := treeFS()
	fsys.MapFS["big.bin"] = file(strings.Repeat("x", 1234))
	runCases(t, fsys, proto.Stat, []toolCase{
		{"file", map[string]any{"path": "./README.md"}, proto.Limits{},
			"path: README.md\nkind: file\nsize: 15 bytes\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-11-29T20:55:59Z"},
		{"big", map[string]any{"path": "big.bin"}, proto.Limits{},
			"path: big.bin\nkind: file\nsize: 1234 bytes (1.2 KB)\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-11-29T20:55:59Z"},
		{"folder", map[string]any{"path": "empty"}, proto.Limits{},
			"path: empty\nkind: folder\nsize: 0 bytes\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-11-29T20:55:59Z"},
		{"symlink", map[string]any{"path": "to-readme"}, proto.Limits{},
			"path: to-readme\nkind: symlink\nsize: 9 bytes\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-11-29T20:55:59Z\ntarget: README.md"},
		{"dangling", map[string]any{"path": "dangling"}, proto.Limits{},
			"path: dangling\nkind: symlink\nsize: 7 bytes\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-11-29T20:55:59Z\ntarget: nowhere"},
		{"fifo", map[string]any{"path": "fifo"}, proto.Limits{},
			"path: fifo\nkind: named pipe\nsize: 0 bytes\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-11-29T20:55:59Z"},
		{"device", map[string]any{"path": "dev"}, proto.Limits{},
			"path: dev\nkind: device\nsize: 0 bytes\nmode: not visible inside the sandbox (WASI carries no permission bits)\nmodified: 2026-11-29T20:55:59Z"},
		{"missing", map[string]any{"path": "nope"}, proto.Limits{}, "error: no such file or directory: nope"},
	})
	// A symlink out of the root: Lstat works, ReadLink reports EXDEV.
	xfs := readlinkErrFS{errFS: errFS{MapFS: treeFS().MapFS}, name: "escape"}
	got := call(t, xfs, proto.Stat, map[string]any{"path": "escape"}, proto.Limits{}).Text
	if !strings.HasSuffix(got, "\ntarget: outside the sandbox (not followed)") || !strings.Contains(got, "kind: symlink") {
		t.Errorf("stat escape: %q", got)
	}
	got = call(t, xfs, proto.ListDir, map[string]any{}, proto.Limits{}).Text
	if !strings.Contains(got, "\nescape -> (outside the sandbox)\n") {
		t.Errorf("list_dir escape: %q", got)
	}
}

// readlinkErrFS fails only ReadLink for one name, as the host mount does for
// a link whose target lies outside the root.
type readlinkErrFS struct {
	errFS
	name string
}

func (r readlinkErrFS) ReadLink(name string) (string, error) {
	if name == r.name {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.EXDEV}
	}
	return r.errFS.ReadLink(name)
}

func TestGlob(t *testing.T) {
	fsys := treeFS()
	fsys.MapFS[".gitignore"] = file("*.log\nbuild/\n")
	fsys.MapFS["build/out.go"] = file("")
	fsys.MapFS["debug.log"] = file("")
	fsys.MapFS["src/.gitignore"] = file("gen_*.go\n")
	fsys.MapFS["src/gen_x.go"] = file("")
	fsys.MapFS[".git/config"] = file("")
	runCases(t, fsys, proto.Glob, []toolCase{
		{"go files", map[string]any{"pattern": "**/*.go"}, proto.Limits{}, "src/main.go\nsrc/util.go"},
		{"top level only", map[string]any{"pattern": "*.md"}, proto.Limits{}, "README.md"},
		{"under a path", map[string]any{"pattern": "*.go", "path": "src"}, proto.Limits{}, "src/main.go\nsrc/util.go"},
		{"folders", map[string]any{"pattern": "*/"}, proto.Limits{}, "empty/\nsrc/\nzz/"},
		{"folders and files", map[string]any{"pattern": "zz/**"}, proto.Limits{}, "zz/deep/\nzz/deep/a.txt"},
		{"trailing /** needs a component below", map[string]any{"pattern": "**/deep*/**"}, proto.Limits{}, "zz/deep/a.txt"},
		{"symlink entries match", map[string]any{"pattern": "to-*"}, proto.Limits{}, "to-passwd\nto-readme\nto-src"},
		{"no ignore", map[string]any{"pattern": "**/*.go"}, proto.Limits{NoIgnore: true},
			"build/out.go\nsrc/gen_x.go\nsrc/main.go\nsrc/util.go"},
		{"ignored log", map[string]any{"pattern": "*.log"}, proto.Limits{}, "no files match *.log in ."},
		{"cap", map[string]any{"pattern": "**"}, proto.Limits{MaxResults: 3}, ".gitignore\nREADME.md\nblob\n... 23 more matches"},
		{"nothing", map[string]any{"pattern": "*.rs", "path": "src"}, proto.Limits{}, "no files match *.rs in src"},
		{"invalid", map[string]any{"pattern": "[a-"}, proto.Limits{}, "error: invalid glob pattern: [a-"},
		{"not a folder", map[string]any{"pattern": "*", "path": "README.md"}, proto.Limits{}, "error: not a folder: README.md"},
		{"missing", map[string]any{"pattern": "*", "path": "nope"}, proto.Limits{}, "error: no such file or directory: nope"},
		{"not through symlinks", map[string]any{"pattern": "**/main.go"}, proto.Limits{}, "src/main.go"},
	})
}

// TestReadFileGrewSinceStat: a small file's stream buffer is sized from
// its stat, and a file that grew since (or whose stat says too little) is
// still read whole, a NUL past the first buffer refused as anywhere.
func TestReadFileGrewSinceStat(t *testing.T) {
	text := strings.Repeat("a line that was appended\n", 4000) // 100 KB, past the 64 KiB buffer
	fsys := shortStat{fstest.MapFS{"grew.txt": file(text), "late.txt": file(text + "\x00\n")}}
	if got := call(t, fsys, proto.ReadFile, map[string]any{"path": "grew.txt"}, proto.Limits{}).Text; got != text {
		t.Errorf("read_file of a file that grew: %d bytes, want the %d it holds:\n%.200s", len(got), len(text), got)
	}
	got := call(t, fsys, proto.ReadFile, map[string]any{"path": "late.txt"}, proto.Limits{})
	if !got.IsError || !strings.Contains(got.Text, "NUL") {
		t.Errorf("read_file of a file with a late NUL: %.200q", got.Text)
	}
}

// shortStat is an FS whose files say they hold 10 bytes.
type shortStat struct{ fs.FS }

func (s shortStat) Open(name string) (fs.File, error) {
	f, err := s.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return shortFile{f}, nil
}

type shortFile struct{ fs.File }

func (f shortFile) Stat() (fs.FileInfo, error) {
	fi, err := f.File.Stat()
	if err != nil || fi.IsDir() {
		return fi, err
	}
	return shortInfo{fi}, nil
}

type shortInfo struct{ fs.FileInfo }

func (shortInfo) Size() int64 { return 10 }
