package storetest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// RecrawlBackend is a store with the records, archive and recrawl roles.
type RecrawlBackend interface {
	ArchiveBackend
	crawlkeeper.RecrawlStore
}

// RunRecrawl runs the conformance tests of crawlkeeper.RecrawlStore: a
// source's active records with their handles, times and delivery counts;
// other sources (the empty one included) and archived records left out.
func RunRecrawl(t *testing.T, open func(tb testing.TB) RecrawlBackend) {
	e := NewEnv(t, open)
	ctx := context.Background()
	item := func(source string, i int, body, target, event string) string {
		return fmt.Sprintf(`{"_source":%q,"_target":%q,"title":"Page %d","url":"https://r.test/%s/%d","body":%q,"deadline":%q}`,
			source, target, i, source, i, body, event)
	}
	e.Now = T0
	first := e.Ingest(item("r", 1, "a", "t1", "2025-03-09"), item("r", 2, "a", "", ""), item("r", 3, "a", "t3", ""),
		item("other", 1, "a", "", ""), item("", 1, "a", "", "")).IDs
	e.Now = T0.Add(time.Hour)
	e.Ingest(item("r", 1, "a", "t1", "2025-03-09"), item("r", 2, "b", "", ""), item("r", 3, "a", "t3", ""))
	r3 := e.MustGet(first[2])
	if _, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r3.ID, Version: r3.Version, LastUpdatedAt: r3.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, T0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}

	got, err := e.Store.RecrawlRecords(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].ID < got[j].ID })
	if len(got) != 2 || got[0].ID != first[0] || got[1].ID != first[1] {
		t.Fatalf("RecrawlRecords(r) = %+v, want the active records %d and %d", got, first[0], first[1])
	}
	for _, g := range got {
		r := e.MustGet(g.ID)
		want := crawlkeeper.RecrawlStats(r.LastUpdatedAt, r.EventAt, r.Fetches)
		if !g.Stats.LastFetch.Equal(want.LastFetch) || !sameTime(g.Stats.EventAt, want.EventAt) || g.Name != "" ||
			g.Stats.Known != want.Known || g.Stats.Refetches != want.Refetches || g.Stats.Changes != want.Changes ||
			g.Stats.ChangedSeconds != want.ChangedSeconds || g.Stats.UnchangedSeconds != want.UnchangedSeconds ||
			math.Abs(g.Stats.ChangedLogSeconds-want.ChangedLogSeconds) > 1e-6 {
			t.Errorf("RecrawlRecords: record %d reads %+v, want what Get reads: %+v", g.ID, g.Stats, want)
		}
	}
	if got[0].Stats.EventAt == nil || got[1].Stats.Changes != 1 || !got[1].Stats.Known || got[1].Stats.ChangedLogSeconds == 0 {
		t.Errorf("RecrawlRecords: event date or changes not read back: %+v %+v", got[0].Stats, got[1].Stats)
	}
	empty, err := e.Store.RecrawlRecords(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(empty) != 1 || empty[0].ID != first[4] || !empty[0].Stats.Known || empty[0].Stats.Refetches != 0 || empty[0].Stats.EventAt != nil {
		t.Fatalf("RecrawlRecords(\"\") = %+v, want only record %d, with counts at zero and no event", empty, first[4])
	}
	none, err := e.Store.RecrawlRecords(ctx, "nobody")
	if err != nil || len(none) != 0 {
		t.Fatalf("RecrawlRecords(nobody) = %+v, %v; want none", none, err)
	}

	// Names: of the ids asked (an archived one, another source's and an
	// unknown one left out), or of every active record of the source.
	names, err := e.Store.RecrawlNames(ctx, "r", []int64{first[1], first[2], first[3], first[1] + 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != (crawlkeeper.RecrawlName{ID: first[1], URL: "https://r.test/r/2"}) || names[0].Name() != "https://r.test/r/2" {
		t.Fatalf("RecrawlNames(r, ids) = %+v, want only record %d's URL", names, first[1])
	}
	names, err = e.Store.RecrawlNames(ctx, "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(names, func(i, j int) bool { return names[i].ID < names[j].ID })
	if len(names) != 2 || names[0] != (crawlkeeper.RecrawlName{ID: first[0], URL: "https://r.test/r/1", Target: "t1"}) || names[0].Name() != "t1" {
		t.Fatalf("RecrawlNames(r, nil) = %+v, want both active records, the first with its target", names)
	}
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
