package dashboard

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

func values(s Series) []any {
	out := make([]any, len(s.Values))
	for i, v := range s.Values {
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

func TestThroughputChart(t *testing.T) {
	t0 := time.Date(2025, 9, 1, 12, 0, 0, 0, time.UTC)
	c := ThroughputChart([]crawlkeeper.BucketCount{{Start: t0.Add(10 * time.Minute), Done: 4}, {Start: t0, Done: 2}})
	if !c.Time || c.Kind != "bars" || !reflect.DeepEqual(c.X, []float64{float64(t0.Unix()), float64(t0.Unix() + 600)}) {
		t.Fatalf("x: %+v", c)
	}
	if got := values(c.Series[0]); !reflect.DeepEqual(got, []any{2.0, 4.0}) || c.Points() != 2 {
		t.Fatalf("values %v", got)
	}
	if empty := ThroughputChart(nil); empty.Points() != 0 || len(empty.Series) != 1 {
		t.Fatalf("empty: %+v", empty)
	}
}

func TestFillRateChart(t *testing.T) {
	fields := []crawlkeeper.FieldReport{
		{Source: "jobs", Field: "remote", FillRateByRound: map[string]float64{"2": 0.5, "1": 0.1}},
		{Source: "jobs", Field: "visa", FillRateByRound: map[string]float64{"zz": 1}},
	}
	c := FillRateChart(fields, []string{"1", "2", "3"})
	if !reflect.DeepEqual(c.Labels, []string{"1", "2", "zz"}) || !c.Percent || c.Time {
		t.Fatalf("labels %v", c.Labels)
	}
	if got := values(c.Series[0]); !reflect.DeepEqual(got, []any{0.1, 0.5, nil}) {
		t.Fatalf("remote %v", got)
	}
	if got := values(c.Series[1]); !reflect.DeepEqual(got, []any{nil, nil, 1.0}) || c.Series[1].Label != "jobs/visa" {
		t.Fatalf("visa %v", got)
	}
	// Gaps survive JSON as nulls, which uPlot draws as gaps.
	var back struct{ Series []struct{ Values []*float64 } }
	if err := json.Unmarshal([]byte(c.JSON()), &back); err != nil || back.Series[0].Values[2] != nil {
		t.Fatalf("json %s: %v", c.JSON(), err)
	}
}

func TestMovesChart(t *testing.T) {
	t0 := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	runs := []crawlkeeper.ArchiveReport{
		{StartedAt: t0.Add(time.Hour), ByReason: map[crawlkeeper.ArchiveReason]int{crawlkeeper.ReasonEvent: 3}},
		{StartedAt: t0, ByReason: map[crawlkeeper.ArchiveReason]int{crawlkeeper.ReasonAge: 1, crawlkeeper.ReasonStale: 2}},
	}
	c := MovesChart(runs)
	if len(c.Series) != len(crawlkeeper.ArchiveReasons) || c.X[0] != float64(t0.Unix()) {
		t.Fatalf("%+v", c)
	}
	byLabel := map[string][]any{}
	for _, s := range c.Series {
		byLabel[s.Label] = values(s)
	}
	want := map[string][]any{"age": {1.0, 0.0}, "stale": {2.0, 0.0}, "event": {0.0, 3.0}, "manual": {0.0, 0.0}}
	if !reflect.DeepEqual(byLabel, want) {
		t.Fatalf("by reason %v, want %v", byLabel, want)
	}
}

func TestLifetimeChart(t *testing.T) {
	c := LifetimeChart([]crawlkeeper.Lifetime{
		{Lifetime: 0}, {Lifetime: 59 * time.Minute}, {Lifetime: time.Hour}, {Lifetime: 2 * 24 * time.Hour}, {Lifetime: 400 * 24 * time.Hour},
	})
	got := values(c.Series[0])
	want := []any{2.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0}
	if !reflect.DeepEqual(got, want) || len(c.Labels) != len(want) || c.Labels[0] != "< 1h" {
		t.Fatalf("histogram %v labels %v, want %v", got, c.Labels, want)
	}
}

func TestTopChanges(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	stats := map[string]*crawlkeeper.SourceStats{"a": {ChangesPerWeek: f(1)}, "b": {ChangesPerWeek: f(5)}, "c": {}, "d": {ChangesPerWeek: f(5)}}
	top := TopChanges(stats, 2)
	if !reflect.DeepEqual(top, []SourceChange{{"b", 5}, {"d", 5}}) {
		t.Fatalf("top %v", top)
	}
	c := ChangesChart(top)
	if !reflect.DeepEqual(c.Labels, []string{"b", "d"}) || c.Points() != 2 {
		t.Fatalf("chart %+v", c)
	}
}

func TestFreshnessChart(t *testing.T) {
	c := FreshnessChart(&pipeline.Status{Active: 10, Due: 4, NeverProcessed: 1})
	if got := values(c.Series[0]); !reflect.DeepEqual(got, []any{6.0, 3.0, 1.0}) {
		t.Fatalf("freshness %v", got)
	}
}

func TestIngestHistoryChart(t *testing.T) {
	now := time.Date(2025, 9, 1, 12, 30, 0, 0, time.UTC)
	h := NewIngestHistory(func() time.Time { return now })
	batch := func(n int) {
		h.Observe(nil, nil, &crawlkeeper.IngestResult{Outcomes: make([]crawlkeeper.Outcome, n)})
	}
	batch(3)
	now = now.Add(-2 * time.Hour) // a batch dated earlier (the clock is injected)
	batch(5)
	now = time.Date(2025, 9, 1, 12, 59, 0, 0, time.UTC)
	batch(2)
	c := h.Chart(now, 4)
	if c.X[3] != float64(time.Date(2025, 9, 1, 12, 0, 0, 0, time.UTC).Unix()) {
		t.Fatalf("the last bar is not the current hour: %v", c.X)
	}
	if got, want := values(c.Series[0]), []any{0.0, 5.0, 0.0, 5.0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("items per hour %v, want %v", got, want)
	}
}

func TestMovesPerDayChart(t *testing.T) {
	now := time.Date(2025, 9, 3, 9, 0, 0, 0, time.UTC)
	entry := func(at time.Time, moved int, dry bool) crawlkeeper.JournalEntry {
		b, _ := json.Marshal(crawlkeeper.ArchiveReport{StartedAt: at, Archived: moved, DryRun: dry})
		return crawlkeeper.JournalEntry{Kind: crawlkeeper.JournalArchiveRun, At: at, Body: b}
	}
	c := MovesPerDayChart([]crawlkeeper.JournalEntry{
		entry(now.Add(-time.Hour), 4, false),
		entry(now.Add(-2*time.Hour), 6, false),
		entry(now.Add(-3*time.Hour), 100, true), // a dry run moves nothing
		entry(now.Add(-30*time.Hour), 7, false),
		entry(now.Add(-30*24*time.Hour), 9, false), // older than the chart
	}, now, 3)
	if got, want := values(c.Series[0]), []any{0.0, 7.0, 10.0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("moves per day %v, want %v", got, want)
	}
}
