package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCalls is how many calls of each tool each server answers in the
// per-call rows, after mcpWarm calls that are not counted.
const (
	mcpCalls = 500
	mcpWarm  = 20
)

// mark3labsDir is the small module (its own go.mod) that pins the server
// the per-call rows compare with.
const mark3labsDir = "cmd/moat-bench/testdata/mark3labs"

// sdkFloorDir is the per-call rows' floor: a server on the official Go
// SDK, moat mcp's, that only reads or stats the path (no sandbox). Its
// row says how much of moat's figure the SDK alone costs.
const sdkFloorDir = "cmd/moat-bench/testdata/sdkfloor"

// mcpServer is one MCP server under the driver, and what its tools are named.
type mcpServer struct {
	name       string
	cs         *mcp.ClientSession
	read, stat string   // its read_file and its stat
	argv       []string // how it is started
	pid        int
}

// mcpRows times read_file and stat through moat mcp over stdio beside
// mark3labs/mcp-filesystem-server (no sandbox), both driven by the same
// client (the official Go SDK), mcpCalls calls each, the servers in turn
// call by call, on the same 2 KB file: moat as installed (isolated where
// the kernel allows), moat with --isolate off, the SDK's floor
// (sdkFloorDir), and the moat binary base when it is not "" (-base-moat:
// the build before a change). The figure is
// the median call, with the range of the medians of five blocks of a fifth
// of the calls.
func mcpRows(tmp, moat, base, cache string, want func(string) bool) ([]row, error) {
	names := []string{"mcp per call, read_file of 2 KB", "mcp per call, stat"}
	if !want(names[0]) && !want(names[1]) {
		return nil, nil
	}
	fmt.Fprintln(os.Stderr, "moat-bench: mcp per call")
	m3l := filepath.Join(tmp, "mcp-filesystem-server")
	build := exec.Command("go", "build", "-C", mark3labsDir, "-o", m3l, "github.com/mark3labs/mcp-filesystem-server")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "moat-bench: building mark3labs/mcp-filesystem-server (%s): %v\n%s; no mcp per-call rows\n", mark3labsDir, err, out)
		return nil, nil
	}
	floor := filepath.Join(tmp, "sdkfloor")
	if out, err := exec.Command("go", "build", "-o", floor, "./"+sdkFloorDir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the SDK's floor (%s): %v\n%s", sdkFloorDir, err, out)
	}
	root := filepath.Join(tmp, "mcproot")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(root, "notes.md")
	if err := os.WriteFile(file, []byte(strings.Repeat("A line of notes, about forty bytes long.\n", 50)), 0o644); err != nil {
		return nil, err
	}
	settle()
	servers := []*mcpServer{
		{name: "mark3labs", read: "read_file", stat: "get_file_info", argv: []string{m3l, root}},
		{name: "moat mcp", argv: []string{moat, "mcp", "--cache-dir", cache, "--root", root}},
		{name: "moat mcp --isolate off", argv: []string{moat, "mcp", "--isolate", "off", "--cache-dir", cache, "--root", root}},
	}
	servers = append(servers, &mcpServer{name: "the SDK's floor (no sandbox)", argv: []string{floor, root}})
	if base != "" {
		servers = append(servers, &mcpServer{name: "moat mcp, -base-moat", argv: []string{base, "mcp", "--cache-dir", cache, "--root", root}})
	}
	ctx := context.Background()
	for _, s := range servers {
		if s.read == "" {
			s.read, s.stat = "read_file", "stat"
		}
		cmd := exec.Command(s.argv[0], s.argv[1:]...)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "moat-bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return nil, fmt.Errorf("starting %s: %v", s.name, err)
		}
		defer cs.Close()
		s.cs, s.pid = cs, cmd.Process.Pid
	}
	var rows []row
	for i, tool := range []func(*mcpServer) string{
		func(s *mcpServer) string { return s.read },
		func(s *mcpServer) string { return s.stat },
	} {
		if !want(names[i]) {
			continue
		}
		walls, cpu, err := mcpTurns(ctx, servers, tool, file)
		if err != nil {
			return nil, err
		}
		other := callFigure(walls[0])
		for j, s := range servers[1:] {
			f := callFigure(walls[j+1])
			note := fmt.Sprintf("%.2fx; CPU a call %s vs %s", ratio(f.med, other.med), us(cpu[j+1]), us(cpu[0]))
			rows = append(rows, row{fmt.Sprintf("%s, %s vs mark3labs", names[i], s.name), f.String(), other.String(), note})
		}
	}
	return rows, nil
}

// mcpTurns calls tool(s) on each server in turn, the order swapped every
// round, and returns each server's call times (the warm-up left out) and
// the CPU time its processes spent on the counted calls, per call.
func mcpTurns(ctx context.Context, servers []*mcpServer, tool func(*mcpServer) string, path string) ([][]time.Duration, []time.Duration, error) {
	walls := make([][]time.Duration, len(servers))
	cpu := make([]time.Duration, len(servers))
	for i := range mcpWarm + mcpCalls {
		if i == mcpWarm {
			for j, s := range servers {
				cpu[j] = -treeCPU(s.pid)
			}
		}
		for k := range servers {
			j := k
			if i%2 == 1 {
				j = len(servers) - 1 - k
			}
			s := servers[j]
			p := &mcp.CallToolParams{Name: tool(s), Arguments: map[string]any{"path": path}}
			t := time.Now()
			res, err := s.cs.CallTool(ctx, p)
			d := time.Since(t)
			if err != nil || res.IsError {
				return nil, nil, fmt.Errorf("%s %s: %v %v", s.name, p.Name, err, res)
			}
			if i >= mcpWarm {
				walls[j] = append(walls[j], d)
			}
		}
	}
	for j, s := range servers {
		cpu[j] = (cpu[j] + treeCPU(s.pid)) / mcpCalls
	}
	return walls, cpu, nil
}

// treeCPU is the user and system time process pid and its descendants
// (moat's isolated child) have spent so far, from /proc (in clock ticks
// of 10 ms: over hundreds of calls, a figure per call to a few percent);
// 0 where there is no /proc.
func treeCPU(pid int) time.Duration {
	var total time.Duration
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// The fields after the command's name, which is in parentheses.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 12 {
			var ut, st int64
			fmt.Sscan(f[11], &ut)
			fmt.Sscan(f[12], &st)
			total += time.Duration(ut+st) * 10 * time.Millisecond
		}
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, c := range strings.Fields(string(b)) {
			var child int
			fmt.Sscan(c, &child)
			total += treeCPU(child)
		}
	}
	return total
}

// A figure is a median call and the range of the medians of five blocks.
type figure struct{ med, lo, hi time.Duration }

func callFigure(walls []time.Duration) figure {
	f := figure{med: medianOf(walls)}
	n := len(walls) / 5
	for b := range 5 {
		m := medianOf(walls[b*n : (b+1)*n])
		if b == 0 || m < f.lo {
			f.lo = m
		}
		f.hi = max(f.hi, m)
	}
	return f
}

func (f figure) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("%s ms (%s-%s)", ms(f.med), ms(f.lo), ms(f.hi))
}

func us(d time.Duration) string { return fmt.Sprintf("%d us", d.Microseconds()) }
