package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// fileCmds build the hostile trees scripts need and txtar cannot express.
func fileCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// mkfifo NAME: create a named pipe (a read of it must not hang).
		"mkfifo": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 1 {
				ts.Fatalf("usage: mkfifo NAME")
			}
			ts.Check(mkfifo(ts.MkAbs(args[0])))
		},
		// sparse NAME SIZE: a file of SIZE bytes (suffix K, M, G) that takes no disk.
		"sparse": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: sparse NAME SIZE")
			}
			f, err := os.Create(ts.MkAbs(args[0]))
			ts.Check(err)
			ts.Check(f.Truncate(parseSize(ts, args[1])))
			ts.Check(f.Close())
		},
		// repeat NAME SIZE TEXT: a file of TEXT repeated to SIZE bytes (\n in TEXT is a newline).
		"repeat": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 3 {
				ts.Fatalf("usage: repeat NAME SIZE TEXT")
			}
			unit := strings.ReplaceAll(args[2], `\n`, "\n")
			n := parseSize(ts, args[1])
			b := []byte(strings.Repeat(unit, int(n)/len(unit)+1)[:n])
			ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
		},
		// manyfiles DIR N: N empty files f000000.. in DIR.
		"manyfiles": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: manyfiles DIR N")
			}
			dir := ts.MkAbs(args[0])
			ts.Check(os.MkdirAll(dir, 0o755))
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			for i := 0; i < n; i++ {
				ts.Check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d", i)), nil, 0o644))
			}
		},
		// deeptree DIR N: DIR/d/d/d... N levels deep with a file "leaf" at the bottom.
		// Built one level at a time relative to an open folder, so N may go
		// past the system's path limit (PATH_MAX).
		"deeptree": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: deeptree DIR N")
			}
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			ts.Check(os.MkdirAll(ts.MkAbs(args[0]), 0o755))
			dir, err := os.OpenRoot(ts.MkAbs(args[0]))
			ts.Check(err)
			for i := 0; i < n; i++ {
				if err := dir.Mkdir("d", 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
					ts.Fatalf("mkdir at level %d: %v", i, err)
				}
				next, err := dir.OpenRoot("d")
				ts.Check(err)
				dir.Close()
				dir = next
			}
			ts.Check(dir.WriteFile("leaf", []byte("deep leaf\n"), 0o644))
			dir.Close()
		},
		// ctlfile NAME TEXT: a file whose name is given as a Go quoted string
		// ("a\nforged.txt"), for names txtar cannot hold.
		"ctlfile": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: ctlfile QUOTED-NAME TEXT")
			}
			name, err := strconv.Unquote(args[0])
			ts.Check(err)
			ts.Check(os.MkdirAll(filepath.Dir(ts.MkAbs(name)), 0o755))
			ts.Check(os.WriteFile(ts.MkAbs(name), []byte(args[1]+"\n"), 0o644))
		},
		// rewrite NAME TEXT: TEXT written over NAME's first bytes in place
		// (the same file, its size kept if TEXT is no longer), and its
		// access and modification times put back: a change that only
		// the change time shows.
		"rewrite": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: rewrite NAME TEXT")
			}
			p := ts.MkAbs(args[0])
			fi, err := os.Stat(p)
			ts.Check(err)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			ts.Check(err)
			_, err = f.WriteAt([]byte(args[1]), 0)
			ts.Check(err)
			ts.Check(f.Close())
			ts.Check(os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		},
		// hardlink OLD NEW: a second name for the same file.
		"hardlink": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: hardlink OLD NEW")
			}
			ts.Check(os.Link(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
		},
	}
}

func parseSize(ts *testscript.TestScript, s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		ts.Fatalf("bad size %q", s)
	}
	return n * mult
}

func TestTool(t *testing.T) { testscript.Run(t, scriptParams(t, "tool", fileCmds())) }
