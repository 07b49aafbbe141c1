package tools

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/moatdev/moat/guest/proto"
)

// batchFS is a MapFS that reads batches of files (fileBatcher) as
// wasifs.FS does, deciding at most per names a call and refusing the
// names in refuse (-1, as the host refuses what it will not read), and
// counts the files opened one by one and those read in batches.
type batchFS struct {
	fstest.MapFS
	per     int
	refuse  map[string]bool
	opens   map[string]int
	batched map[string]int
}

func newBatchFS(m fstest.MapFS, per int, refuse ...string) *batchFS {
	b := &batchFS{MapFS: m, per: per, refuse: map[string]bool{}, opens: map[string]int{}, batched: map[string]int{}}
	for _, r := range refuse {
		b.refuse[r] = true
	}
	return b
}

func (b *batchFS) Open(name string) (fs.File, error) {
	b.opens[name]++
	return b.MapFS.Open(name)
}

func (b *batchFS) ReadFiles(dir string, names []string, buf []byte, sizes []int32) int {
	at := 0
	for i, nm := range names {
		if i == b.per {
			return i
		}
		sizes[i] = -1
		p := path.Join(dir, nm)
		f := b.MapFS[p]
		if b.refuse[p] || f == nil || !f.Mode.IsRegular() {
			continue
		}
		if len(f.Data) >= len(buf)-at {
			if at > 0 {
				return i
			}
			continue
		}
		sizes[i] = int32(copy(buf[at:], f.Data))
		at += len(f.Data)
		b.batched[p]++
	}
	return len(names)
}

// aheadTree is a tree whose folders mix files and subfolders (the walk
// leaves a folder's read-ahead and comes back to it), with ignored files
// among the searched ones, a binary file, an empty one, one larger than a
// batch's buffer, and more files in one folder than one batch holds.
func aheadTree() fstest.MapFS {
	m := fstest.MapFS{
		".gitignore":     file("*.log\n"),
		"a.txt":          file("hit a\nmiss\n"),
		"b/inner.txt":    file("hit inner\n"),
		"b/c/deep.txt":   file("deep hit\n"),
		"b/z.txt":        file("z hit\n"),
		"c.log":          file("hit ignored\n"),
		"d.txt":          file("after hit\nmore\nhit again\n"),
		"bin.dat":        file("hit\x00binary\n"),
		"empty.txt":      file(""),
		"large.txt":      file(strings.Repeat("filler line\n", aheadBuf/12+10) + "hit at the end\n"),
		"wide/skip.log":  file("hit\n"),
		"wide/zz/in.txt": file("hit in zz\n"),
	}
	for i := range 3*aheadNames + 5 {
		body := "nothing\n"
		if i%7 == 0 {
			body = fmt.Sprintf("line\nhit %d\nline\n", i)
		}
		m[fmt.Sprintf("wide/f%03d.txt", i)] = file(body)
	}
	return m
}

// TestReadAheadSameAnswers: grep answers the same whether the file system
// reads batches or not, in every mode, with context, a glob and a cap,
// when the batches are cut short and when some files are refused; and
// with batches, the small files of the tree are read in them, not opened
// one by one.
func TestReadAheadSameAnswers(t *testing.T) {
	for _, args := range []proto.GrepArgs{
		{Pattern: "hit"},
		{Pattern: "hit", Context: 1},
		{Pattern: "hit", OutputMode: proto.GrepCount},
		{Pattern: "hit", OutputMode: proto.GrepFiles},
		{Pattern: "hit", Glob: "*.txt"},
		{Pattern: "hit", Glob: "wide/f0*.txt"},
		{Pattern: "hit", MaxResults: 5},
		{Pattern: "hit", Path: "wide"},
		{Pattern: "end$"},
	} {
		want, err := grep(aheadTree(), args, proto.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []*batchFS{
			newBatchFS(aheadTree(), aheadNames),
			newBatchFS(aheadTree(), 3),
			newBatchFS(aheadTree(), aheadNames, "a.txt", "wide/f007.txt", "b/z.txt"),
		} {
			got, err := grep(b, args, proto.Limits{})
			if err != nil || got != want {
				t.Errorf("%+v with batches of %d (refusing %v): %q, %v; want %q", args, b.per, b.refuse, got, err, want)
			}
		}
	}
	b := newBatchFS(aheadTree(), aheadNames, "a.txt")
	if _, err := grep(b, proto.GrepArgs{Pattern: "hit"}, proto.Limits{}); err != nil {
		t.Fatal(err)
	}
	for p, f := range aheadTree() {
		small := f.Mode.IsRegular() && len(f.Data) < aheadBuf/2 && !strings.HasSuffix(p, ".log") && p != ".gitignore"
		switch {
		case b.batched[p] > 1 || b.opens[p] > 1 && p != "bin.dat":
			t.Errorf("%s: read %d times in batches, opened %d times", p, b.batched[p], b.opens[p])
		case p == "a.txt" || p == "large.txt":
			if b.opens[p] != 1 {
				t.Errorf("%s (refused or too large for a batch): opened %d times, want 1", p, b.opens[p])
			}
		case small && (b.batched[p] != 1 || b.opens[p] != 0):
			t.Errorf("%s: read %d times in batches and opened %d times, want once in a batch", p, b.batched[p], b.opens[p])
		}
	}
}
