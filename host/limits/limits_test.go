package limits

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A replay takes the recorded options from the recording and the others
// (how a call is held) from its own command line.
func TestReplayed(t *testing.T) {
	rec := Options{MaxReadBytes: 5, MaxResults: 6, NoIgnore: true, Deny: []string{"*.x"}, NoRedact: true, Timeout: time.Hour, Isolate: "off"}
	run := Defaults()
	run.Timeout, run.Isolate, run.Resolver, run.MaxResults = time.Second, "require", "root", 99
	got := Replayed(rec, run)
	if got.MaxReadBytes != 5 || got.MaxResults != 6 || !got.NoIgnore || len(got.Deny) != 1 || !got.NoRedact {
		t.Errorf("recorded options not kept: %+v", got)
	}
	if got.Timeout != time.Second || got.Isolate != "require" || got.Resolver != "root" {
		t.Errorf("the command line's not taken: %+v", got)
	}
}

// A recording's session JSON holds the recorded options only, under the
// names recordings have always had.
func TestRecordedJSON(t *testing.T) {
	o := Defaults()
	o.NoRedact = true
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"max_read_bytes":262144,"max_results":100,"no_redact":true}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back Options
	if err := json.Unmarshal([]byte(`{"max_read_bytes":1,"max_results":2,"no_ignore":true}`), &back); err != nil || back.NoRedact || !back.NoIgnore || strings.Join(back.Deny, "") != "" {
		t.Errorf("an old recording's options: %+v, %v", back, err)
	}
}
