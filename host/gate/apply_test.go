package gate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOSwappedInBeforeApply swaps the approved target for a FIFO at the
// last moment, between the apply's check of it and its open, where a local
// writer racing the gate lands. The open must not wait for a writer: the
// proposal is refused at once and the next one is served (in moat mcp one
// hung apply held the gate for every later proposal).
func TestFIFOSwappedInBeforeApply(t *testing.T) {
	f := newFixture(t, "y\ny\n")
	f.write("a.txt", "old\n")
	fifo := filepath.Join(f.root, "a.txt")
	opens := 0
	f.gate.beforeOpen = func(rel string) {
		opens++
		if rel != "a.txt" || opens != 2 { // the first open is the diff's, the second the apply's
			return
		}
		os.Remove(fifo)
		if err := mkfifo(fifo); err != nil {
			t.Skip("mkfifo:", err)
		}
	}
	done := make(chan string, 1)
	go func() { done <- f.propose("propose_write", write("a.txt", "model\n")).Text }()
	var text string
	select {
	case text = <-done:
	case <-time.After(time.Minute): // only ever reached when the open waits
		// A writer lets the hung open return, so the test ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("the gate's open of a FIFO swapped in before the apply waited for a writer")
	}
	if !strings.HasPrefix(text, "refused: a.txt changed on disk") || !strings.Contains(text, "not a regular file") {
		t.Fatalf("result %q, want a refusal naming the swap", text)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
	f.noTemp()
	res := f.propose("propose_write", write("b.txt", "next\n"))
	if !res.Written {
		t.Fatalf("the next proposal: %+v", res)
	}
}

// A name the tools show reaches the same file at the gate: on Unix a
// backslash is part of a name, and a name shown quoted is passed back
// quoted. The gate still never writes a name that hides from a person
// listing the folder (here one that is not UTF-8).
func TestProposalNamesAsShown(t *testing.T) {
	if filepath.Separator == '\\' {
		t.Skip("a backslash is a separator here")
	}
	f := newFixture(t, "y\ny\n")
	res := f.propose("propose_write", write(`a\b.txt`, "model\n"))
	if !res.Written {
		t.Fatalf("propose_write a\\b.txt: %+v", res)
	}
	if got, ok := f.read(`a\b.txt`); !ok || got != "model\n" {
		t.Errorf(`a\b.txt holds %q, %v`, got, ok)
	}
	if _, err := os.Lstat(filepath.Join(f.root, "a")); err == nil {
		t.Error(`propose_write a\b.txt created a folder "a"`)
	}
	f.write("bad\xffname.txt", "old\n")
	res = f.propose("propose_edit", map[string]any{"path": `"bad\xffname.txt"`, "old_text": "old", "new_text": "new"})
	if !strings.HasPrefix(res.Text, `refused: "bad\xffname.txt" contains control or invisible characters`) {
		t.Errorf("propose_edit of a name that is not UTF-8: %q", res.Text)
	}
}
