package tools

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/moatdev/moat/guest/proto"
)

// readBufSize is read_file's stream buffer. Lines longer than it are
// consumed in pieces, so a 10 MB one-line file costs this much, not 10 MB.
const readBufSize = 64 << 10

// minReadBuf is the smallest stream buffer, for files smaller than it.
const minReadBuf = 512

// maxPrealloc caps the output buffer allocated up front: the host may set a
// large budget, and a file's size says nothing about what fits in memory.
const maxPrealloc = 1 << 20

// readFile returns a page of a text file: lines from offset, as many as
// limit and the byte budget allow, with a notice saying how to read on when
// it stops early. Binary and special files are refused with what they are,
// so the model does not try again another way.
func readFile(fsys fs.FS, a proto.ReadFileArgs, lim proto.Limits) (string, error) {
	const tool = proto.ReadFile
	p, err := cleanPath(a.Path)
	if err != nil {
		return "", err
	}
	shown := displayPath(a.Path)
	if a.Offset < 0 {
		return "", errorf("offset must be 1 or more, got %d", a.Offset)
	}
	if a.Limit < 0 {
		return "", errorf("limit must be 1 or more, got %d", a.Limit)
	}
	offset := max(a.Offset, 1)
	budget := lim.MaxReadBytes
	if budget <= 0 {
		budget = proto.DefaultMaxReadBytes
	}

	// Stat before opening: opening a FIFO would block the guest until a
	// writer appears, and opening a device may have side effects.
	info, err := fs.Stat(fsys, p)
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}
	if info.IsDir() {
		return "", errorf("%s is a folder; use list_dir", shown)
	}
	if !info.Mode().IsRegular() {
		return "", errorf("not a regular file: %s (%s)", shown, fileKind(info.Mode()))
	}
	f, err := fsys.Open(p)
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}
	defer f.Close()

	// A small file gets a buffer its size (the one read that finds its
	// end included): zeroing and collecting 64 KiB was most of what
	// reading a file of a few KB cost.
	r := bufio.NewReaderSize(f, int(min(readBufSize, max(info.Size()+1, minReadBuf))))
	head, err := r.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", fsError(tool, a.Path, err)
	}
	if len(head) == 0 {
		return "(empty file)", nil
	}
	if isBinary(head) {
		return "", errorf("binary file: %s (%s, %s)", shown, humanSize(info.Size()), binaryKind(head))
	}

	pg := pager{r: r, budget: int(min(budget, int64(^uint(0)>>1))), nulAt: -1}
	// The output never exceeds the budget or the file: allocate it once.
	pg.out = make([]byte, 0, min(int64(pg.budget), info.Size()+1, maxPrealloc))
	err = pg.skipTo(offset)
	if pg.nulAt >= 0 {
		return "", binaryNUL(shown, info.Size(), pg.nulAt)
	}
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}
	if pg.eof {
		return "", errorf("offset %d is past the end of %s (%d lines)", offset, shown, pg.line-1)
	}
	stop, err := pg.collect(a.Limit)
	if pg.nulAt >= 0 {
		return "", binaryNUL(shown, info.Size(), pg.nulAt)
	}
	if err != nil {
		return "", fsError(tool, a.Path, err)
	}

	var out strings.Builder
	out.Write(pg.out)
	if stop != stopEOF && !strings.HasSuffix(out.String(), "\n") {
		out.WriteByte('\n')
	}
	last := pg.line - 1 // the last line shown whole
	switch stop {
	case stopBudget:
		if last < offset {
			// The first line alone is over budget: show its head.
			fmtTo(&out, "\n[truncated: line %d of %s is longer than the read budget; showed its first %s]",
				offset, shown, humanSize(int64(pg.partial)))
		} else {
			fmtTo(&out, "\n[truncated: showed lines %d-%d of %s (%s of %s); call read_file with offset=%d to read on]",
				offset, last, shown, humanSize(int64(pg.shown)), humanSize(info.Size()), last+1)
		}
	case stopLimit:
		fmtTo(&out, "\n[showed lines %d-%d; the file has more, call read_file with offset=%d]", offset, last, last+1)
	}
	return out.String(), nil
}

// binaryNUL refuses a file whose NUL byte was found past its head, where
// isBinary did not look: a NUL is never passed on to the model, and grep
// treats such a file as binary too.
func binaryNUL(shown string, size, at int64) error {
	return errorf("binary file: %s (%s, a NUL byte at offset %d)", shown, humanSize(size), at)
}

// nulError stops the pager at a NUL byte (pager.nulAt says where).
type nulError struct{}

func (nulError) Error() string { return "NUL byte" }

// stopReason says why collect stopped before the end of the file.
type stopReason int

const (
	stopEOF stopReason = iota
	stopBudget
	stopLimit
)

// pager streams a text file line by line without ever holding more than
// one buffer of it plus the output budget.
type pager struct {
	r      *bufio.Reader
	budget int
	line   int  // number of the next line to read, from 1
	eof    bool // the reader is exhausted
	out    []byte
	shown  int // bytes of whole lines in out
	// partial is how much of an over-budget first line was shown.
	partial int
	pos     int64 // file offset of the next byte read
	nulAt   int64 // offset of a NUL byte met in what was read, or -1
}

// read is r.ReadSlice('\n') watching for NUL bytes: every byte read_file
// reads, shown or skipped, is checked, so that a NUL anywhere before the
// end of the page refuses the file.
func (pg *pager) read() ([]byte, error) {
	chunk, err := pg.r.ReadSlice('\n')
	if i := bytes.IndexByte(chunk, 0); i >= 0 {
		pg.nulAt = pg.pos + int64(i)
		return nil, nulError{}
	}
	pg.pos += int64(len(chunk))
	return chunk, err
}

// skipTo discards lines until line n is next, counting lines as it goes
// so that an offset past the end can say how long the file is.
func (pg *pager) skipTo(n int) error {
	pg.line = 1
	for pg.line < n {
		if err := pg.discardLine(); err != nil {
			return err
		}
		if pg.eof {
			return nil
		}
	}
	// A file ending in "\n" has no line after it.
	if _, err := pg.r.Peek(1); errors.Is(err, io.EOF) {
		pg.eof = true
	} else if err != nil {
		return err
	}
	return nil
}

// discardLine consumes one line (of any length) and advances pg.line.
func (pg *pager) discardLine() error {
	for {
		chunk, err := pg.read()
		switch {
		case err == nil:
			pg.line++
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(chunk) > 0 {
				pg.line++ // a last line without "\n"
			}
			pg.eof = true
			return nil
		default:
			return err
		}
	}
}

// collect appends whole lines to out until the file ends, limit lines are
// shown (limit > 0), or the next line would exceed the budget.
func (pg *pager) collect(limit int) (stopReason, error) {
	first := pg.line
	for {
		if limit > 0 && pg.line-first >= limit {
			if _, err := pg.r.Peek(1); errors.Is(err, io.EOF) {
				return stopEOF, nil
			} else if err != nil {
				return 0, err
			}
			return stopLimit, nil
		}
		start := len(pg.out)
		for {
			chunk, err := pg.read()
			if len(chunk) > 0 {
				if len(pg.out)+len(chunk) > pg.budget {
					pg.overBudget(start, chunk, pg.line == first)
					return stopBudget, nil
				}
				pg.out = append(pg.out, chunk...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, err
			}
			if len(chunk) > 0 || len(pg.out) > start {
				pg.line++
				pg.shown = len(pg.out)
			}
			if errors.Is(err, io.EOF) {
				return stopEOF, nil
			}
			break
		}
		if _, err := pg.r.Peek(1); errors.Is(err, io.EOF) {
			return stopEOF, nil
		}
	}
}

// overBudget handles a line that does not fit: it is dropped whole unless
// it is the first line asked for, in which case its head is shown so that
// the model sees something rather than an empty page.
func (pg *pager) overBudget(start int, chunk []byte, firstLine bool) {
	if !firstLine {
		pg.out = pg.out[:start]
		return
	}
	room := pg.budget - len(pg.out)
	pg.out = append(pg.out, cutUTF8(chunk, room)...)
	pg.partial = len(pg.out) - start
	pg.shown = len(pg.out)
}
