package demo_test

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/alerts"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/crawlkeeper/crawlkeeper/internal/demo"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// TestIncidentsFireTheDemoRules replays three simulated days ending at the
// incidents' anchor, with the demo's configuration, archive passes and
// alert evaluations on the way, as the demo does before it serves. At the
// anchor each incident's rule fires (the stalled events round, the silent
// news site, the jobs round without salaries), and the history holds the
// same alerts firing and resolving 48 hours earlier. The archive journal
// has the passes.
func TestIncidentsFireTheDemoRules(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(demo.Config()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenWith(ctx, filepath.Join(t.TempDir(), "db"), crawlkeeper.StoreOptions{Durability: cfg.Store.Durability})
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
	anchor := time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC)
	var now time.Time
	clock := func() time.Time { return now }
	g := &crawlkeeper.Ingester{Store: st, Config: cfg, Dates: dates.New(), Now: clock,
		Rules: crawlkeeper.NewRules(cfg), Monitor: mon, MarksInStore: true}
	g.AfterCommit = append(g.AfterCommit, crawlkeeper.FieldObserver(mon, func(err error) { t.Error(err) }))
	sim := demo.New(func(ctx context.Context, items []map[string]any, meta crawlkeeper.Meta) error {
		metas := make([]crawlkeeper.Meta, len(items))
		for i := range metas {
			metas[i] = meta
		}
		_, err := g.IngestItems(ctx, items, metas)
		return err
	}, mon, anchor.Add(-3*24*time.Hour), 1)
	// A quarter of the targets: the incidents do not depend on volume.
	sim.Shrink(4)
	sim.Incidents(anchor)
	arch := &crawlkeeper.Archiver{Store: st, Config: cfg, Dates: dates.New(), Now: clock}
	eng := &alerts.Engine{Store: st, Monitor: mon, Config: cfg.Alerts, Now: clock}
	err = sim.Replay(ctx, anchor.Add(-3*24*time.Hour), anchor, 5*time.Minute, func(t time.Time) { now = t },
		demo.Task{Every: 2 * time.Hour, Run: func(ctx context.Context, _ time.Time) error {
			_, err := arch.Run(ctx, crawlkeeper.ArchiveOptions{})
			return err
		}},
		demo.Task{Every: time.Hour, Run: func(ctx context.Context, _ time.Time) error {
			_, err := eng.Evaluate(ctx)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := alerts.List(ctx, st, cfg.Alerts, 1000)
	if err != nil {
		t.Fatal(err)
	}
	firing := map[string]alerts.Alert{}
	for _, a := range l.Firing {
		firing[a.Rule] = a
	}
	for _, rule := range []string{"events-round-stalled", "news-stopped-delivering", "jobs-salary-coverage"} {
		a, ok := firing[rule]
		if !ok {
			t.Errorf("at the anchor %s is not firing; firing: %+v", rule, l.Firing)
			continue
		}
		if !a.Since.Before(anchor) || a.Since.Before(anchor.Add(-8*time.Hour)) {
			t.Errorf("%s firing since %s, want within the 8 hours before the anchor", rule, a.Since)
		}
	}
	for _, r := range l.Rules {
		if r.Error != "" {
			t.Errorf("rule %s: %s", r.Name, r.Error)
		}
	}
	// Two days earlier the same incidents fired and resolved.
	earlier := map[string][]string{}
	for _, ev := range l.Recent {
		if ev.At.Before(anchor.Add(-30 * time.Hour)) {
			earlier[ev.Alert.Rule] = append(earlier[ev.Alert.Rule], ev.Status)
		}
	}
	for _, rule := range []string{"events-round-stalled", "news-stopped-delivering", "jobs-salary-coverage"} {
		got := earlier[rule]
		sort.Strings(got)
		if len(got) < 2 || got[0] != alerts.StatusFiring || got[len(got)-1] != alerts.StatusResolved {
			t.Errorf("%s two days before the anchor: events %v, want it fired and resolved", rule, got)
		}
	}
	for rule := range firing {
		switch rule {
		case "events-round-stalled", "news-stopped-delivering", "jobs-salary-coverage":
		default:
			t.Errorf("%s fires without an incident: %+v", rule, firing[rule])
		}
	}
	runs, err := st.Journal(ctx, crawlkeeper.JournalArchiveRun, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 36 {
		t.Errorf("%d archive passes in the journal over three days, want one every two hours", len(runs))
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Archived == 0 {
		t.Errorf("nothing archived after three simulated days: %+v", stats)
	}
}
