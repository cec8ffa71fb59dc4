package main

import (
	"encoding/json"
	"testing"
)

// TestBenchReportShape runs the benchmark at its smallest scale and checks
// the report's contract (names, fields, values measured). Speed itself is
// not asserted: benchmarks are not tests.
func TestBenchReportShape(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every measurement")
	}
	c := newCLI(t)
	out := c.ok("", "bench", "--scale", "1000", "--json", "--only", "ingest_new,ingest_recrawl,ingest_changed,archive_select,archive_move,query_active,scan_pass,realtime_p99,date_parse_iso,date_parse_mixed")
	var rep struct {
		Machine struct {
			CPUs int    `json:"cpus"`
			Go   string `json:"go"`
		} `json:"machine"`
		Scale   int `json:"scale"`
		Results []struct {
			Name     string  `json:"name"`
			Unit     string  `json:"unit"`
			Value    float64 `json:"value"`
			Baseline float64 `json:"baseline"`
			Ratio    float64 `json:"ratio"`
			N        int     `json:"n"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	if rep.Machine.CPUs < 1 || rep.Machine.Go == "" || rep.Scale != 1000 {
		t.Fatalf("machine/scale = %+v %d", rep.Machine, rep.Scale)
	}
	want := []string{"ingest_new", "ingest_recrawl", "ingest_changed", "archive_select", "archive_move", "query_active", "scan_pass", "realtime_p99", "date_parse_iso", "date_parse_mixed"}
	if len(rep.Results) != len(want) {
		t.Fatalf("got %d results, want %d: %s", len(rep.Results), len(want), out)
	}
	for i, r := range rep.Results {
		if r.Name != want[i] || r.Unit == "" || r.Value <= 0 || r.N <= 0 {
			t.Errorf("result %d = %+v, want name %s with a measured value", i, r, want[i])
		}
	}
}
