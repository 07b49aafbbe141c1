package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/moatdev/moat/host/scripted"
)

// The conformance suite: the scripts of testscripts/conformance run
// against host/scripted and against Ollama's own server (ollamareal: Ollama's
// server package at the version go.mod requires, built by make conformance
// with a scripted generator in the model's place), each in both APIs. A
// script scripts the model with fakellm's JSON; against the real server
// each turn is written as the raw text a model of its family generates,
// and Ollama's own templates, parsers and OpenAI layer make of it what
// moat receives. The agent's scenarios in testscripts/chat run against the
// real server too (TestConformanceChat).
//
// In the scripts, [real] is true against Ollama's server, [openai] over
// the OpenAI-compatible API (MOAT_API=openai: moat speaks it to
// $OLLAMA_HOST/v1). fakellm [-family F] SCRIPT.json starts the fake or
// Ollama's server, whichever the run is against; F (qwen3, the default,
// qwen3-coder, qwen3.5, gpt-oss or plain) is read only by the real one.
// ollamareal, with the same arguments, starts only Ollama's;
// ollamaprompt N prints the prompt Ollama rendered for the Nth
// completion, and ollamaraw RAW.json queues replies as raw model text
// instead ([real] only).

// realBinary is the built ollamareal, from make conformance.
var realBinary = os.Getenv("MOAT_OLLAMAREAL")

func TestConformance(t *testing.T) {
	for _, server := range []string{"fake", "real"} {
		for _, api := range []string{"ollama", "openai"} {
			t.Run(server+"/"+api, func(t *testing.T) {
				if server == "real" && realBinary == "" {
					t.Skip("MOAT_OLLAMAREAL is not set: make conformance builds Ollama's own server and runs these against it")
				}
				testscript.Run(t, conformanceParams(t, "conformance", server, api))
			})
		}
	}
}

// chatAgainstReal are the scripts of testscripts/chat that run against
// Ollama's server unchanged. The others script what only the fake can do
// (a dropped connection, a hang, llama.cpp's stream, calls written as text
// in a scripted format, a model's capability list or context lengths of
// its own, calls without ids), or pin what Ollama does otherwise: the call
// ids it makes up at random (ask_read_and_answer, ask_parallel_calls,
// ask_wrong_argument_type, ask_openai, ask_output_json), the pieces a
// reply streams in (ask_thinking_escapes, ask_output_stream_json), models
// made in one second listed by name (ask_model_without_tools), and a call
// of a tool not offered, which Ollama's template-driven parser drops
// (ask_unknown_tool; testscripts/conformance/unknown_tool.txtar has it).
var chatAgainstReal = []string{
	"ask_changes_summary", "ask_escape_refused", "ask_flags_anywhere", "ask_instructions",
	"ask_model_not_found", "ask_no_terminal", "ask_no_tool_model",
	"ask_output_json_cap", "ask_system_file", "ask_terminal_escapes", "ask_thinking",
	"ask_turn_cap", "ask_usage",
	"chat_changes_summary", "chat_commands", "chat_failed_turn", "chat_piped",
}

// TestConformanceChat runs the agent's scenarios (chatAgainstReal) against
// Ollama's own server, with fakellm starting it.
func TestConformanceChat(t *testing.T) {
	if realBinary == "" {
		t.Skip("MOAT_OLLAMAREAL is not set: make conformance builds Ollama's own server and runs these against it")
	}
	dir := t.TempDir()
	for _, name := range chatAgainstReal {
		b, err := os.ReadFile(filepath.Join("..", "..", "testscripts", "chat", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".txtar"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := conformanceParams(t, "chat", "real", "")
	p.Dir = dir
	testscript.Run(t, p)
}

// TestConformanceVersion: the conformance server is built from the Ollama
// version moat's own client is.
func TestConformanceVersion(t *testing.T) {
	want := requiredVersion(t, filepath.Join("..", "..", "go.mod"))
	if got := requiredVersion(t, filepath.Join("..", "..", "conformance", "go.mod")); got != want {
		t.Errorf("conformance/go.mod requires github.com/ollama/ollama %s, go.mod %s: make them the same", got, want)
	}
	for _, name := range chatAgainstReal {
		if _, err := os.Stat(filepath.Join("..", "..", "testscripts", "chat", name+".txtar")); err != nil {
			t.Errorf("chatAgainstReal names %s: %v", name, err)
		}
	}
}

func requiredVersion(t *testing.T, gomod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/ollama/ollama\s+(v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s requires no github.com/ollama/ollama", gomod)
	}
	return string(m[1])
}

// conformanceParams are the script parameters against one server ("fake"
// or "real") in one API ("ollama", "openai", or "" to leave it to the
// script).
func conformanceParams(t *testing.T, area, server, api string) testscript.Params {
	cmds := llmCmds()
	fake := cmds["fakellm"]
	cmds["fakellm"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) == 3 && args[0] == "-family" {
			args = args[2:] // the fake has one shape of reply for every family
		}
		fake(ts, neg, args)
	}
	for _, c := range []string{"ollamareal", "ollamaprompt", "ollamaraw"} {
		cmds[c] = func(ts *testscript.TestScript, neg bool, args []string) {
			ts.Fatalf("%s: only against Ollama's server ([real])", c)
		}
	}
	if server == "real" {
		realCmds(cmds)
	}
	p := scriptParams(t, area, cmds)
	setup, cond := p.Setup, p.Condition
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		if api != "" {
			env.Setenv("MOAT_API", api)
		}
		return nil
	}
	p.Condition = func(c string) (bool, error) {
		switch c {
		case "real":
			return server == "real", nil
		case "openai":
			return api == "openai", nil
		}
		return cond(c)
	}
	return p
}

// realServer is one ollamareal process, for one script.
type realServer struct {
	url string
}

func (r *realServer) get(ts *testscript.TestScript, path string, v any) {
	resp, err := http.Get(r.url + path)
	ts.Check(err)
	defer resp.Body.Close()
	ts.Check(json.NewDecoder(resp.Body).Decode(v))
}

func (r *realServer) post(ts *testscript.TestScript, path string, v any) {
	b, _ := json.Marshal(v)
	resp, err := http.Post(r.url+path, "application/json", bytes.NewReader(b))
	ts.Check(err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		ts.Fatalf("ollamareal %s: %s", path, body)
	}
}

type wireExchange struct {
	Path     string `json:"path"`
	Request  string `json:"request"`
	Status   int    `json:"status"`
	Response string `json:"response"`
}

// chats are the chat exchanges the server had.
func (r *realServer) chats(ts *testscript.TestScript) []wireExchange {
	var w []wireExchange
	r.get(ts, "/moat/wire", &w)
	return w
}

// realCmds replaces fakellm, llmsent and llmcount with commands that drive
// Ollama's server, and adds ollamaprompt.
func realCmds(cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) {
	var mu sync.Mutex // scripts run in parallel
	servers := map[*testscript.TestScript]*realServer{}
	lookup := func(ts *testscript.TestScript, cmd string) *realServer {
		mu.Lock()
		defer mu.Unlock()
		s := servers[ts]
		if s == nil {
			ts.Fatalf("%s: no server: run fakellm first", cmd)
		}
		return s
	}
	cmds["fakellm"] = func(ts *testscript.TestScript, neg bool, args []string) {
		family := ""
		if len(args) == 3 && args[0] == "-family" {
			family, args = args[1], args[2:]
		}
		if neg || len(args) != 1 {
			ts.Fatalf("usage: fakellm [-family F] SCRIPT.json")
		}
		sc, err := scripted.ParseScript([]byte(ts.ReadFile(args[0])))
		ts.Check(err)
		srv := startReal(ts)
		mu.Lock()
		servers[ts] = srv
		mu.Unlock()
		ts.Defer(func() {
			mu.Lock()
			delete(servers, ts)
			mu.Unlock()
		})
		if len(sc.Models) == 0 {
			sc.Models = []scripted.Model{{Name: "qwen3:latest", Tools: true}}
		}
		type spec struct {
			Name       string         `json:"name"`
			Family     string         `json:"family"`
			Parameters map[string]any `json:"parameters,omitempty"`
		}
		var specs []spec
		for _, m := range sc.Models {
			f := modelFamily(family, m)
			sp := spec{Name: m.Name, Family: f}
			if m.NumCtx > 0 {
				sp.Parameters = map[string]any{"num_ctx": m.NumCtx}
			}
			specs = append(specs, sp)
		}
		// Created last to first: /api/tags lists the newest first, and
		// the fake lists its models in the script's order.
		rev := slices.Clone(specs)
		slices.Reverse(rev)
		srv.post(ts, "/moat/models", rev)
		// Every turn is written in the first model's family: a script
		// talks to one model.
		fam := specs[0].Family
		var replies []rawReply
		for i, turn := range sc.Turns {
			r, err := renderTurn(fam, turn)
			if err != nil {
				ts.Fatalf("fakellm: turn %d: %v", i+1, err)
			}
			replies = append(replies, r)
		}
		srv.post(ts, "/moat/replies", replies)
		ts.Setenv("OLLAMA_HOST", srv.url)
		ts.Setenv("FAKELLM", srv.url)
	}
	cmds["ollamareal"] = cmds["fakellm"] // by its own name, for a script that runs only against it
	cmds["llmsent"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) > 1 {
			ts.Fatalf("usage: llmsent [N]")
		}
		ex := lookup(ts, "llmsent").chats(ts)
		if len(args) == 1 {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 || n > len(ex) {
				ts.Fatalf("llmsent: want a request number from 1 to %d, got %q", len(ex), args[0])
			}
			ex = ex[n-1 : n]
		}
		for _, e := range ex {
			var b bytes.Buffer
			if err := json.Compact(&b, []byte(e.Request)); err != nil {
				b.Reset()
				b.WriteString(e.Request)
			}
			fmt.Fprintf(ts.Stdout(), "%s %s\n", e.Path, b.String())
		}
	}
	cmds["llmcount"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: llmcount N")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		if got := len(lookup(ts, "llmcount").chats(ts)); got != want {
			ts.Fatalf("the server got %d chat requests, want %d", got, want)
		}
	}
	// ollamaraw RAW.json: the replies as raw model text (rawReply), in
	// place of those fakellm wrote from its script: what no scripted turn
	// says, such as a reply cut inside a call.
	cmds["ollamaraw"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: ollamaraw RAW.json")
		}
		var rs []rawReply
		dec := json.NewDecoder(strings.NewReader(ts.ReadFile(args[0])))
		dec.DisallowUnknownFields()
		ts.Check(dec.Decode(&rs))
		lookup(ts, "ollamaraw").post(ts, "/moat/replies", rs)
	}
	cmds["ollamaprompt"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: ollamaprompt N")
		}
		var ps []struct {
			Prompt string `json:"prompt"`
			NumCtx int    `json:"num_ctx"`
		}
		lookup(ts, "ollamaprompt").get(ts, "/moat/prompts", &ps)
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > len(ps) {
			ts.Fatalf("ollamaprompt: want a completion number from 1 to %d, got %q", len(ps), args[0])
		}
		fmt.Fprintf(ts.Stdout(), "num_ctx %d\n%s\n", ps[n-1].NumCtx, ps[n-1].Prompt)
	}
}

// startReal starts ollamareal with an empty model store of the script's
// own, and stops it when the script ends.
func startReal(ts *testscript.TestScript) *realServer {
	store := ts.MkAbs(".") + ".ollamareal" // beside the root, not in it
	ts.Check(os.MkdirAll(store, 0o755))
	cmd := exec.Command(realBinary)
	cmd.Env = append(os.Environ(), "OLLAMA_MODELS="+store, "OLLAMA_KEEP_ALIVE=10m", "HOME="+store)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	ts.Defer(func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(store)
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				ready <- u
			}
		}
		close(ready)
	}()
	select {
	case u, ok := <-ready:
		if !ok {
			cmd.Wait()
			ts.Fatalf("ollamareal did not start: %s", stderr.String())
		}
		return &realServer{url: u}
	case <-time.After(30 * time.Second):
		ts.Fatalf("ollamareal did not start within 30 s: %s", stderr.String())
	}
	return nil
}

// modelFamily is the family a script's model is made in: -family, else
// what its name or scripted family says, else qwen3 (plain for a model
// without tools).
func modelFamily(flag string, m scripted.Model) string {
	if !m.Tools {
		return "plain"
	}
	if flag != "" {
		return flag
	}
	n := strings.ToLower(m.Name)
	switch {
	case m.Family == "gptoss" || strings.HasPrefix(n, "gpt-oss"):
		return "gpt-oss"
	case strings.HasPrefix(n, "qwen3-coder"):
		return "qwen3-coder"
	case strings.HasPrefix(n, "qwen3.5"):
		return "qwen3.5"
	}
	return "qwen3"
}

// rawReply is one completion as ollamareal streams it (see
// conformance/main.go).
type rawReply struct {
	Thought    string `json:"thought,omitempty"`
	Text       string `json:"text,omitempty"`
	DoneReason string `json:"done_reason,omitempty"`
	Error      string `json:"error,omitempty"`
	ErrorAfter int    `json:"error_after,omitempty"`
	DelayMS    int    `json:"delay_ms,omitempty"`
}

// renderTurn writes a scripted turn as the raw text a model of the family
// generates: its thinking, its text, its calls in the family's own format.
func renderTurn(family string, t scripted.Turn) (rawReply, error) {
	r := rawReply{DoneReason: t.DoneReason, DelayMS: t.DelayMS}
	switch t.Fail {
	case "":
	case "http500":
		// The runner's error, as the fake words it: Ollama passes it on.
		r.Error = "fakellm: simulated server failure"
		return r, nil
	case "error":
		r.Error, r.ErrorAfter = "fakellm: simulated failure mid-stream", 1
	default:
		return r, fmt.Errorf("fail %q has no counterpart in Ollama's server", t.Fail)
	}
	if t.TextCalls != "" {
		return r, fmt.Errorf("text_calls: write the calls into text instead, as the model of the family does")
	}
	args := func(c scripted.Call) string {
		if c.RawArgs != nil {
			return *c.RawArgs
		}
		if len(c.Args) == 0 {
			return "{}"
		}
		return string(c.Args)
	}
	var b strings.Builder
	switch family {
	case "qwen3", "qwen3.5", "plain":
		// A qwen3.5 model always opens with its thinking, if only an
		// empty one: Ollama's parser takes all it writes before
		// </think> for thinking.
		if t.Thinking != "" || family == "qwen3.5" {
			r.Thought = "<think>" + t.Thinking + "</think>\n\n"
		}
		b.WriteString(t.Text)
		for _, c := range t.Calls {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", c.Name, args(c))
		}
	case "qwen3-coder":
		if t.Thinking != "" {
			return r, fmt.Errorf("qwen3-coder does not think")
		}
		b.WriteString(t.Text)
		for _, c := range t.Calls {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "<tool_call>\n<function=%s>\n", c.Name)
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(args(c)), &m); err != nil {
				return r, fmt.Errorf("qwen3-coder's calls take an object of arguments: %v", err)
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v := string(m[k])
				var s string
				if json.Unmarshal(m[k], &s) == nil {
					v = s // strings are written bare
				}
				fmt.Fprintf(&b, "<parameter=%s>\n%s\n</parameter>\n", k, v)
			}
			b.WriteString("</function>\n</tool_call>")
		}
	case "gpt-oss":
		// Harmony: gpt-oss reasons whatever think says, so its analysis
		// is part of the text, never left out.
		if t.Thinking != "" {
			b.WriteString("<|channel|>analysis<|message|>" + t.Thinking + "<|end|><|start|>assistant")
		}
		if len(t.Calls) == 0 {
			b.WriteString("<|channel|>final<|message|>" + t.Text)
			break
		}
		if t.Text != "" {
			b.WriteString("<|channel|>commentary<|message|>" + t.Text + "<|end|><|start|>assistant")
		}
		// One call a reply: <|call|> is a stop token, so the runner
		// ends the reply there and never sends the token itself.
		if len(t.Calls) > 1 {
			return r, fmt.Errorf("gpt-oss makes one call a reply")
		}
		fmt.Fprintf(&b, "<|channel|>commentary to=functions.%s <|constrain|>json<|message|>%s", t.Calls[0].Name, args(t.Calls[0]))
	default:
		return r, fmt.Errorf("unknown family %q", family)
	}
	r.Text = b.String()
	return r, nil
}

// TestConformanceWire checks the fake's wire against Ollama's: the same
// turns, asked of both over both APIs (written in each family's format
// for Ollama's parsers), must stream the same shape of chunks (which fields each carries, whether a call arrives whole, the
// done and finish reasons, how a failure shows), runs of like chunks
// taken as one, since the two cut text into pieces of different sizes.
func TestConformanceWire(t *testing.T) {
	if realBinary == "" {
		t.Skip("MOAT_OLLAMAREAL is not set: make conformance builds Ollama's own server and runs these against it")
	}
	turns := map[string]string{
		"text":           `{"text":"Hello there."}`,
		"thinking, text": `{"thinking":"Let me see.","text":"Hello there."}`,
		"call":           `{"calls":[{"name":"read_file","args":{"path":"a"}}]}`,
		"text, calls":    `{"text":"Let me look.","calls":[{"name":"read_file","args":{"path":"a"}},{"name":"read_file","args":{"path":"b"}}]}`,
		"length":         `{"text":"Hello th","done_reason":"length"}`,
		"failure":        `{"text":"Hello there.","fail":"error"}`,
		"runner error":   `{"fail":"http500"}`,
	}
	tools := `[{"type":"function","function":{"name":"read_file","description":"r","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]`
	bodies := map[string]string{
		"/api/chat":            `{"model":"qwen3","stream":true,"messages":[{"role":"user","content":"hi"}],"tools":` + tools + `}`,
		"/v1/chat/completions": `{"model":"qwen3","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}],"tools":` + tools + `}`,
	}
	// The other families' parsers, for what each model writes.
	type famTurn struct{ family, name, turn string }
	var cases []famTurn
	for name, turn := range turns {
		cases = append(cases, famTurn{"qwen3", name, turn})
	}
	for _, f := range []string{"qwen3.5", "qwen3-coder", "gpt-oss"} {
		cases = append(cases, famTurn{f, "text", turns["text"]}, famTurn{f, "call", turns["call"]}, famTurn{f, "length", turns["length"]})
		if f != "qwen3-coder" {
			cases = append(cases, famTurn{f, "thinking, text", turns["thinking, text"]})
		}
	}
	for _, c := range cases {
		for path, body := range bodies {
			family, name, turn := c.family, c.name, c.turn
			t.Run(family+" "+name+" "+path, func(t *testing.T) {
				fam := ""
				if family == "gpt-oss" {
					fam = `,"family":"gptoss"`
				}
				js := `{"models":[{"name":"qwen3:latest","tools":true,"thinking":true` + fam + `}],"turns":[` + turn + `]}`
				sc, err := scripted.ParseScript([]byte(js))
				if err != nil {
					t.Fatal(err)
				}
				fake := scripted.Start(sc)
				defer fake.Close()
				want := wireShape(t, fake.URL+path, body)
				r, err := renderTurn(family, sc.Turns[0])
				if err != nil {
					t.Fatal(err)
				}
				real := startRealT(t)
				postJSON(t, real+"/moat/models", `[{"name":"qwen3","family":"`+family+`"}]`)
				b, _ := json.Marshal([]rawReply{r})
				postJSON(t, real+"/moat/replies", string(b))
				got := wireShape(t, real+path, body)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("Ollama's shape:\n\t%s\nthe fake's:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
				}
			})
		}
	}
}

func postJSON(t *testing.T, url, body string) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		t.Fatalf("%s: %s", url, b)
	}
}

// startRealT is startReal for a Go test.
func startRealT(t *testing.T) string {
	store := t.TempDir()
	cmd := exec.Command(realBinary)
	cmd.Env = append(os.Environ(), "OLLAMA_MODELS="+store, "HOME="+store)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
			go io.Copy(io.Discard, out)
			return u
		}
	}
	t.Fatal("ollamareal did not start")
	return ""
}

// wireShape is the status and each chunk's shape, like chunks in a row
// taken as one.
func wireShape(t *testing.T, url, body string) []string {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := []string{fmt.Sprintf("HTTP %d", resp.StatusCode)}
	add := func(s string) {
		if out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		data, sse := strings.CutPrefix(line, "data: ")
		if data == "[DONE]" {
			add("[DONE]")
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			add("not JSON")
			continue
		}
		add(chunkShape(m, sse))
	}
	return out
}

// chunkShape names what one chunk carries.
func chunkShape(m map[string]any, sse bool) string {
	var parts []string
	if e, ok := m["error"]; ok {
		if _, obj := e.(map[string]any); obj {
			return "error object"
		}
		return "error"
	}
	msg, _ := m["message"].(map[string]any)
	if sse {
		if m["model"] == "" {
			parts = append(parts, "no model")
		}
		ch, _ := m["choices"].([]any)
		if len(ch) == 0 {
			parts = append(parts, "no choices")
		} else {
			c := ch[0].(map[string]any)
			msg, _ = c["delta"].(map[string]any)
			if f, ok := c["finish_reason"].(string); ok {
				parts = append(parts, "finish "+f)
			}
		}
		if m["usage"] != nil {
			parts = append(parts, "usage")
		}
	} else if m["done"] == true {
		parts = append(parts, fmt.Sprintf("done %v", m["done_reason"]))
	}
	for _, k := range []string{"role", "content", "thinking", "reasoning", "reasoning_content"} {
		v, ok := msg[k]
		switch {
		case !ok:
		case v == "":
			if k == "content" {
				parts = append(parts, "content empty")
			}
		case k == "role":
			if !sse {
				continue
			}
			parts = append(parts, "role")
		default:
			parts = append(parts, k)
		}
	}
	if tcs, ok := msg["tool_calls"].([]any); ok {
		for _, tc := range tcs {
			c := tc.(map[string]any)
			f, _ := c["function"].(map[string]any)
			whole := "call"
			if c["id"] != nil {
				whole += " with id"
			}
			if a, ok := f["arguments"].(string); ok && !json.Valid([]byte(a)) {
				whole += ", part of its arguments"
			}
			parts = append(parts, whole)
		}
	}
	return strings.Join(parts, ", ")
}
