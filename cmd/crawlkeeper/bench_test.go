package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
)

type benchRow struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Value    float64 `json:"value"`
	Baseline float64 `json:"baseline"`
	Ratio    float64 `json:"ratio"`
	N        int     `json:"n"`
	Target   string  `json:"target"`
	Met      bool    `json:"met"`
}

// lowerIsBetter are the results measured in time, whose ratio is
// baseline/value; the others' is value/baseline.
var lowerIsBetter = map[string]bool{"archive_select": true, "archive_select_unindexed": true, "query_active": true}

// TestBenchReportShape runs the benchmark at its smallest scale and checks
// the report's contract: every row measured, every row with a baseline of
// the same work (or a target saying it has none and is not met), and each
// ratio as its row defines it. Speed itself is not asserted: benchmarks
// are not tests.
func TestBenchReportShape(t *testing.T) {
	longtest.Skip(t, "runs every benchmark measurement")
	if testing.Short() {
		t.Skip("runs every measurement")
	}
	c := newCLI(t)
	want := []string{"ingest_new", "ingest_new_normal", "ingest_recrawl", "ingest_changed", "archive_select", "archive_select_unindexed",
		"archive_move", "query_active", "scan_pass", "realtime_p99", "date_parse_iso", "date_parse_mixed"}
	out := c.ok("", "bench", "--scale", "1000", "--json", "--only", strings.Join(want, ","))
	var rep struct {
		Machine struct {
			CPUs int    `json:"cpus"`
			Go   string `json:"go"`
		} `json:"machine"`
		Scale   int        `json:"scale"`
		Results []benchRow `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out)
	}
	if rep.Machine.CPUs < 1 || rep.Machine.Go == "" || rep.Scale != 1000 {
		t.Fatalf("machine/scale = %+v %d", rep.Machine, rep.Scale)
	}
	if len(rep.Results) != len(want) {
		t.Fatalf("got %d results, want %d: %s", len(rep.Results), len(want), out)
	}
	for i, r := range rep.Results {
		if r.Name != want[i] || r.Unit == "" || r.Value <= 0 || r.N <= 0 || r.Target == "" {
			t.Errorf("result %d = %+v, want name %s with a measured value and a target", i, r, want[i])
		}
		checkBaseline(t, r)
	}
}

// checkBaseline checks that r has a baseline and its ratio, or says it
// has none.
func checkBaseline(t *testing.T, r benchRow) {
	t.Helper()
	if strings.HasPrefix(r.Target, "none") {
		if r.Met {
			t.Errorf("%s: no target but met", r.Name)
		}
		return
	}
	if r.Name == "realtime_p99" {
		// An absolute target: the time from commit to processed.
		if !strings.Contains(r.Target, "half the") {
			t.Errorf("realtime_p99 target %q does not name the ingest rate", r.Target)
		}
		return
	}
	if r.Baseline <= 0 || r.Ratio <= 0 {
		t.Errorf("%s: baseline %g, ratio %g: want both measured", r.Name, r.Baseline, r.Ratio)
		return
	}
	want := r.Value / r.Baseline
	if lowerIsBetter[r.Name] {
		want = r.Baseline / r.Value
	}
	if d := r.Ratio - want; d > 1e-9*want || d < -1e-9*want {
		t.Errorf("%s: ratio %g, want %g", r.Name, r.Ratio, want)
	}
}

// TestBenchSweepChart runs a two-size sweep and checks that it writes the
// chart and its data, one report per size with the sweep's results.
func TestBenchSweepChart(t *testing.T) {
	longtest.Skip(t, "runs the benchmark sweep")
	if testing.Short() {
		t.Skip("runs the sweep")
	}
	c := newCLI(t)
	chart := filepath.Join(t.TempDir(), "sweep.svg")
	c.ok("", "bench", "--sweep", "1000,2000", "--chart", chart)
	b, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "scan_pass") {
		t.Errorf("chart is not an SVG of the sweep: %.200s", b)
	}
	data, err := os.ReadFile(strings.TrimSuffix(chart, ".svg") + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var reps []struct {
		Scale   int        `json:"scale"`
		Results []benchRow `json:"results"`
	}
	if err := json.Unmarshal(data, &reps); err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].Scale != 1000 || reps[1].Scale != 2000 {
		t.Fatalf("sweep data: %s", data)
	}
	for _, rep := range reps {
		var names []string
		for _, r := range rep.Results {
			names = append(names, r.Name)
			checkBaseline(t, r)
		}
		if got := strings.Join(names, ","); got != strings.Join(sweepResults, ",") {
			t.Errorf("size %d: results %s, want %s", rep.Scale, got, strings.Join(sweepResults, ","))
		}
	}
	// The saved data draws the same chart again, as a PNG too.
	png := filepath.Join(t.TempDir(), "again.png")
	c.ok("", "bench", "--replot", strings.TrimSuffix(chart, ".svg")+".json", "--chart", png)
	if b, err := os.ReadFile(png); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("replot: %v, %.8q", err, b)
	}
}
