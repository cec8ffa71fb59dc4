package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
)

// TestBenchCommandRows runs the whole-path results at the smallest scale
// on each store, with the built binary: every row measured against the
// minimal program built for the store's engine (both printed what they
// should and found the same hits, or the run fails), with its ratio as
// baseline/value. On MongoDB, which has no minimal program, the rows say
// they were not measured and why. Speed is not asserted.
func TestBenchCommandRows(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and the minimal programs")
	}
	bin := buildBinary(t)
	names := []string{"cli_start_ms", "cli_stats_ms", "search_cli_ms"}
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			c := newCLI(t)
			if kind != testdb.SQLite {
				t.Setenv("CRAWLKEEPER_STORE", testdb.ServerURL(t, kind))
			}
			out := c.ok("", "bench", "--scale", "1000", "--json", "--only", strings.Join(names, ","), "--binary", bin)
			var rep struct{ Results []benchRow }
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("bench --json: %v\n%s", err, out)
			}
			if len(rep.Results) != len(names) {
				t.Fatalf("got %d results, want %s: %s", len(rep.Results), names, out)
			}
			for i, r := range rep.Results {
				if r.Name != names[i] {
					t.Errorf("result %d is %s, want %s", i, r.Name, names[i])
					continue
				}
				if kind == testdb.MongoDB {
					if !strings.HasPrefix(r.Target, "none: not measured: no minimal program for mongodb") || r.Met {
						t.Errorf("%s on MongoDB: %+v, want not measured", r.Name, r)
					}
					continue
				}
				if r.Value <= 0 || r.Baseline <= 0 || r.N <= 0 || r.Ratio != r.Baseline/r.Value {
					t.Errorf("%s: %+v, want measured value and baseline, ratio baseline/value", r.Name, r)
				}
			}
		})
	}
}
