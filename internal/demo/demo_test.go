package demo_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/crawlkeeper/crawlkeeper/internal/demo"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// TestSimulationShowsEveryFeature runs five simulated days and checks that
// the data the demo produces exercises what the dashboard shows: rounds
// with failures, changes with history, deadlines in several languages read
// correctly, unreadable dates, rare fields, and expired records to
// archive by every rule.
func TestSimulationShowsEveryFeature(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(demo.Config()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mon, err := roaringmon.Open(ctx, st, cfg.MonitorOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	st.SetTxMarker(mon)
	start := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	now := start
	g := &crawlkeeper.Ingester{Store: st, Config: cfg, Dates: dates.New(), Now: func() time.Time { return now },
		Rules: crawlkeeper.NewRules(cfg), Monitor: mon, MarksInStore: true}
	g.AfterCommit = append(g.AfterCommit, crawlkeeper.FieldObserver(mon, func(err error) { t.Error(err) }))
	dateErrors := 0
	sim := demo.New(func(ctx context.Context, items []map[string]any, meta crawlkeeper.Meta) error {
		metas := make([]crawlkeeper.Meta, len(items))
		for i := range metas {
			metas[i] = meta
		}
		sum, err := g.IngestItems(ctx, items, metas)
		if err == nil && sum.Rejected > 0 {
			t.Errorf("the simulation produced invalid items: %+v", sum.Errors)
		}
		if sum != nil {
			dateErrors += sum.DateErrors
		}
		return err
	}, mon, start, 1)
	for ; now.Before(start.Add(5 * 24 * time.Hour)); now = now.Add(10 * time.Minute) {
		if err := sim.Step(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	rounds, err := mon.Rounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perSite := map[string]int{}
	failed := int64(0)
	for _, r := range rounds {
		perSite[strings.SplitN(r.Round, "-", 2)[0]]++
		failed += r.Failed
	}
	if perSite["jobs"] < 19 || perSite["uni"] < 9 || perSite["events"] < 14 || perSite["news"] < 39 || failed == 0 {
		t.Fatalf("rounds per site %v, failed %d", perSite, failed)
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.History == 0 || stats.Active < 500 {
		t.Fatalf("stats = %+v", stats)
	}
	// Only the deliberate "Open until filled" deadlines are unreadable:
	// every generated date format must be read.
	if jobs := stats.Sources["jobs.example.com"]; jobs == nil || jobs.ActiveDateErrors == 0 || stats.DateErrors != jobs.DateErrors {
		t.Fatalf("date errors: %+v (want them all in jobs.example.com)", stats.Sources)
	}
	for _, src := range []string{"uni.example.jp", "events.example.de"} {
		page, err := st.List(ctx, crawlkeeper.RecordQuery{Source: src, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			if r.EventAt == nil {
				t.Fatalf("%s record %s has no event_at: %s", src, r.Title, r.Item)
			}
		}
	}
	fields, err := mon.Fields(ctx, "jobs.example.com")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fields {
		if f.Field == "visa_sponsorship" && f.Filled > 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("the watched rare field was never filled: %+v", fields)
	}
	rep, err := (&crawlkeeper.Archiver{Store: st, Config: cfg, Dates: dates.New(), Now: func() time.Time { return now }}).Run(ctx, crawlkeeper.ArchiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByReason[crawlkeeper.ReasonStale] == 0 || rep.ByReason[crawlkeeper.ReasonEvent] == 0 {
		t.Fatalf("after five days the archive should move stale and expired records: %+v", rep)
	}
	if chk, err := st.Check(ctx); err != nil || !chk.OK {
		t.Fatalf("check: %+v %v", chk, err)
	}
}
