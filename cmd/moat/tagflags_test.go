package main

import (
	"flag"
	"reflect"
	"testing"
	"time"

	"github.com/moatdev/moat/host/limits"
)

// TestBehaviourFlags: a recording's comment names the limits and lists as
// the command line gave them, in the order it always has.
func TestBehaviourFlags(t *testing.T) {
	a := agentFlags{api: "ollama", numCtx: 8192, maxTurns: 8, think: "high"}
	a.c.lim = limits.Defaults()
	a.c.lim.NoIgnore = true
	a.c.lim.Deny, a.c.lim.Allow = []string{"*.pem", "*.key"}, []string{".env.example"}
	want := "--api ollama --model m --num-ctx 8192 --max-turns 8 --max-read-bytes 262144 --max-results 100 --writes ask --think high --no-ignore --deny *.pem --deny *.key --allow .env.example"
	if got := a.behaviourFlags("m", "ask"); got != want {
		t.Errorf("behaviourFlags =\n%s\nwant\n%s", got, want)
	}
	a.c.lim = limits.Defaults()
	a.think = ""
	want = "--api ollama --model m --num-ctx 8192 --max-turns 8 --max-read-bytes 262144 --max-results 100 --writes deny"
	if got := a.behaviourFlags("m", "deny"); got != want {
		t.Errorf("behaviourFlags =\n%s\nwant\n%s", got, want)
	}
}

// TestOptionsAreFlags: every field of limits.Options is a flag of every
// command that takes the shared flags, with its help and its default,
// and a positive one refuses zero.
func TestOptionsAreFlags(t *testing.T) {
	var c common
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.register(fs)
	for _, f := range reflect.VisibleFields(reflect.TypeFor[limits.Options]()) {
		name := f.Tag.Get("flag")
		fl := fs.Lookup(name)
		if name == "" || fl == nil || fl.Usage != f.Tag.Get("help") || f.Tag.Get("help") == "" || f.Tag.Get("json") == "" {
			t.Errorf("limits.Options.%s: flag %q, help %q, json %q: not registered as tagged", f.Name, name, f.Tag.Get("help"), f.Tag.Get("json"))
			continue
		}
		var other common
		ofs := flag.NewFlagSet("t", flag.ContinueOnError)
		other.register(ofs)
		if f.Tag.Get("check") == "positive" && ofs.Set(name, "0") == nil {
			t.Errorf("--%s=0 accepted", name)
		}
	}
	if !reflect.DeepEqual(c.lim, limits.Defaults()) {
		t.Errorf("defaults not set: %+v", c.lim)
	}
	if err := fs.Parse([]string{"--no-ignore", "--deny", "a,b", "--max-results", "7", "--redact=false", "--timeout", "5s"}); err != nil {
		t.Fatal(err)
	}
	want := limits.Defaults()
	want.MaxResults, want.NoIgnore, want.Deny, want.NoRedact, want.Timeout = 7, true, []string{"a", "b"}, true, 5*time.Second
	if !reflect.DeepEqual(c.lim, want) {
		t.Errorf("parsed %+v, want %+v", c.lim, want)
	}
	if fs.Set("resolver", "chroot") == nil || fs.Set("isolate", "maybe") == nil {
		t.Error("a resolver or isolation mode that does not parse is accepted")
	}
}

// TestReplayTakesUnrecordedOptions: moat replay has a flag for each
// option a recording does not keep, and none for those it does.
func TestReplayTakesUnrecordedOptions(t *testing.T) {
	fs := replayCommand(&env{}).FlagSet
	for _, f := range reflect.VisibleFields(reflect.TypeFor[limits.Options]()) {
		if got := fs.Lookup(f.Tag.Get("flag")) != nil; got == limits.Recorded(f) {
			t.Errorf("--%s: a flag of moat replay %v, recorded %v", f.Tag.Get("flag"), got, limits.Recorded(f))
		}
	}
}
