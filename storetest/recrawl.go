package storetest

import (
	"context"
	"fmt"
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
		want := crawlkeeper.RecrawlRecord{ID: r.ID, URL: r.URL, Target: r.LastTarget, CrawledAt: r.CrawledAt,
			LastUpdatedAt: r.LastUpdatedAt, LastChangedAt: r.LastChangedAt, EventAt: r.EventAt, Fetches: r.Fetches}
		if g.URL != want.URL || g.Target != want.Target || !g.CrawledAt.Equal(want.CrawledAt) ||
			!g.LastUpdatedAt.Equal(want.LastUpdatedAt) || !g.LastChangedAt.Equal(want.LastChangedAt) ||
			!sameTime(g.EventAt, want.EventAt) || g.Fetches == nil || *g.Fetches != *want.Fetches {
			t.Errorf("RecrawlRecords: %+v (fetches %+v), want what Get reads: %+v (fetches %+v)", g, g.Fetches, want, want.Fetches)
		}
	}
	if got[0].Target != "t1" || got[0].EventAt == nil || got[1].Target != "" || got[1].Fetches.Changes != 1 {
		t.Errorf("RecrawlRecords: target, event date or changes not read back: %+v %+v", got[0], got[1])
	}
	empty, err := e.Store.RecrawlRecords(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(empty) != 1 || empty[0].ID != first[4] || empty[0].Fetches == nil || *empty[0].Fetches != (crawlkeeper.FetchCounts{}) {
		t.Fatalf("RecrawlRecords(\"\") = %+v, want only record %d, with counts at zero", empty, first[4])
	}
	none, err := e.Store.RecrawlRecords(ctx, "nobody")
	if err != nil || len(none) != 0 {
		t.Fatalf("RecrawlRecords(nobody) = %+v, %v; want none", none, err)
	}
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
