package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moatdev/moat/host/scripted"
)

// lockedBuffer is a bytes.Buffer the test can read while moat writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// moat ask prints the answer while it streams in; an interrupt (Ctrl-C
// cancels run's context) keeps what was printed, ends its line and says
// the answer is incomplete, with exit status 1.
func TestChatAskKeepsStreamedTextOnInterrupt(t *testing.T) {
	sc, err := scripted.ParseScript([]byte(`{"turns":[{"text":"Partial answer","fail":"hang"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.Start(sc)
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL)
	t.Setenv("MOAT_ISOLATE", "off")
	t.Setenv("MOAT_CACHE_DIR", sharedCache(t))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"ask", "--root", t.TempDir(), "--model", "qwen3", "hi"}, strings.NewReader(""), &stdout, &stderr)
	}()
	for deadline := time.Now().Add(30 * time.Second); stdout.String() != "Part"; time.Sleep(5 * time.Millisecond) {
		select {
		case c := <-code:
			t.Fatalf("moat ask ended (status %d) before the reply did; stdout %q, stderr %q", c, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first chunk never reached stdout; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
	}
	cancel()
	if c := <-code; c != exitInterrupt {
		t.Errorf("exit status %d, want %d", c, exitInterrupt)
	}
	if got := stdout.String(); got != "Part\n" {
		t.Errorf("stdout = %q, want the partial answer and a newline", got)
	}
	if got, want := stderr.String(), "moat: interrupted; the answer above is incomplete\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}
