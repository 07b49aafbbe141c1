package runner_test

import (
	"fmt"

	"context"
	"github.com/moatdev/moat/host/runner"
	"os/exec"
	"strings"
	"testing"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/fanout"
)

func goroot(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command")
	}
	return strings.TrimSpace(string(out)) + "/src"
}

// BenchmarkGrepGOROOT greps Go's own source tree through the whole sandbox
// (guest + confined filesystem): a full scan with no hits, and a literal,
// in one instance and split over two (host/fanout).
func BenchmarkGrepGOROOT(b *testing.B) {
	src := goroot(b)
	for _, k := range kinds() {
		for _, pat := range []string{"zzqqxx_nohit", "func main\\(\\) \\{"} {
			for _, par := range []int{1, 2} {
				b.Run(fmt.Sprintf("%v/%s/parallel=%d", k, pat, par), func(b *testing.B) {
					m, err := module()
					if err != nil {
						b.Fatal(err)
					}
					r, err := runner.Open(m, runner.Config{Root: src, Resolver: k, Parallel: par})
					if err != nil {
						b.Fatal(err)
					}
					ex := fanout.New(r, r.Parallel())
					defer ex.Close()
					args := []byte(`{"pattern":"` + strings.ReplaceAll(pat, `\`, `\\`) + `","max_results":1000000}`)
					for i := 0; i < b.N; i++ {
						resp, err := ex.Exec(context.Background(), proto.Request{ID: uint64(i + 1), Tool: proto.Grep, Args: args})
						if err != nil || resp.IsError {
							b.Fatal(err, resp.Text)
						}
					}
				})
			}
		}
	}
}

var _ = confine.Auto
