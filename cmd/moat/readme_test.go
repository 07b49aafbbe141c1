package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's `moat tool` examples work verbatim, run at the top of the
// repository as the README's own commands are: each read-only one exits 0.
func TestReadmeToolExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the guest")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"MOAT_CACHE_DIR": sharedCache(t), "MOAT_ISOLATE": "off", "MOAT_ROOT": filepath.Join("..", "..")}
	n := 0
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "moat tool ") || strings.Contains(line, "propose_") {
			continue // a proposal asks a person first
		}
		args, ok := shellWords(strings.TrimSpace(strings.SplitN(line, "  #", 2)[0]))
		if !ok {
			t.Errorf("cannot read the example %q", line)
			continue
		}
		n++
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
		if code := exitCode(dispatch(context.Background(), e, rootCommand(e), args[1:]), &errb); code != exitOK {
			t.Errorf("%s: exit %d\n%s%s", line, code, out.String(), errb.String())
		}
	}
	if n < 5 {
		t.Errorf("found %d examples in README.md, want the tool block's", n)
	}
}

// shellWords splits a command line of plain words and single-quoted ones,
// the only quoting the README's examples use.
func shellWords(s string) ([]string, bool) {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, false
			}
			words = append(words, s[1:end+1])
			s = s[end+2:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		if strings.ContainsAny(w, `"'\$`) {
			return nil, false
		}
		words, s = append(words, w), rest
	}
	return words, true
}
