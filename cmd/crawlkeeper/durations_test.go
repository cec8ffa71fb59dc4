package main

import (
	"encoding/json"
	"testing"
)

// TestDurationsUseMonotonicClock checks that the durations and rates
// commands print are of the work done, measured on the monotonic clock:
// with --now the injected clock stands still, and a duration taken from
// it would be 0 s and its rate 0 records/s.
func TestDurationsUseMonotonicClock(t *testing.T) {
	c := newCLI(t)
	c.ok(items(40), "ingest", "-", "--now", "2026-01-01T00:00:00Z")
	for _, run := range []struct {
		args   []string
		fields []string
	}{
		{[]string{"scan", "--once", "--json", "--now", "2026-01-01T01:00:00Z"}, []string{"duration_s", "rate"}},
		{[]string{"archive", "--dry-run", "--json", "--now", "2031-03-01T00:00:00Z"}, []string{"duration_s"}},
		{[]string{"archive", "--json", "--now", "2031-03-01T00:00:00Z"}, []string{"duration_s"}},
		{[]string{"rekey", "--json", "--now", "2031-03-01T00:00:00Z"}, []string{"elapsed_ns"}},
	} {
		out := c.ok("", run.args...)
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("crawlkeeper %v: %v\n%s", run.args, err, out)
		}
		for _, f := range run.fields {
			if v, ok := rep[f].(float64); !ok || v <= 0 {
				t.Errorf("crawlkeeper %v: %s = %v, want the time the work took\n%s", run.args, f, rep[f], out)
			}
		}
	}
}
