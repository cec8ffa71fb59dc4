package main

import (
	"encoding/json"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
)

// TestBenchSearchRows runs the search measurements at the smallest scale
// and checks their rows: measured values, both paths found the same hits
// (the run fails otherwise), and the ratios as each row defines them.
func TestBenchSearchRows(t *testing.T) {
	longtest.Skip(t, "loads a search corpus and benchmarks it")
	if testing.Short() {
		t.Skip("loads a search corpus")
	}
	c := newCLI(t)
	out := c.ok("", "bench", "--scale", "1000", "--json", "--only", "search_p50,ingest_new_search")
	var rep struct {
		Results []struct {
			Name     string  `json:"name"`
			Value    float64 `json:"value"`
			Baseline float64 `json:"baseline"`
			Ratio    float64 `json:"ratio"`
			N        int     `json:"n"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	if len(rep.Results) != 2 || rep.Results[0].Name != "search_p50" || rep.Results[1].Name != "ingest_new_search" {
		t.Fatalf("results: %s", out)
	}
	for _, r := range rep.Results {
		if r.Value <= 0 || r.Baseline <= 0 || r.Ratio <= 0 || r.N <= 0 {
			t.Errorf("%s: %+v, want measured values", r.Name, r)
		}
	}
	if s := rep.Results[0]; s.Ratio != s.Baseline/s.Value {
		t.Errorf("search_p50 ratio %g, want baseline/value %g", s.Ratio, s.Baseline/s.Value)
	}
}
