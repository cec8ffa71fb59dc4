package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// listRoundItem is a listing item of a source with a round and a target;
// an empty value leaves the field out.
func listRoundItem(name, source, body, round, target string) string {
	return itemWithRound(map[string]any{"title": name + " listed", "url": "https://listrounds.test/" + name, "body": body, "_source": source}, round, target)
}

// itemWithRound adds _round and _target to item, each unless empty, and
// returns its JSON.
func itemWithRound(item map[string]any, round, target string) string {
	if round != "" {
		item["_round"] = round
	}
	if target != "" {
		item["_target"] = target
	}
	b, _ := json.Marshal(item)
	return string(b)
}

// testListRounds checks the round and target filters of listings
// (RecordQuery.Round, RecordQuery.Target): each record is listed under the
// round and target of its last delivery that carried them, alone or with
// the source filter, in both orders and across pages of every size, in the
// active records and in the archive.
func testListRounds(t *testing.T, open func(tb testing.TB) ArchiveBackend) {
	t.Run("ListRounds", func(t *testing.T) {
		ctx := context.Background()
		e := NewEnv(t, open)
		ids := map[string]int64{}
		names := map[int64]string{}
		ingest := func(at time.Duration, name, source, body, round, target string) {
			t.Helper()
			e.Now = T0.Add(at)
			id := e.Ingest(listRoundItem(name, source, body, round, target)).IDs[0]
			ids[name], names[id] = id, name
		}
		// listAll pages through a listing with pages of limit records.
		listAll := func(q crawlkeeper.RecordQuery, limit int) []*crawlkeeper.Record {
			t.Helper()
			q.Limit = limit
			var out []*crawlkeeper.Record
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatalf("%+v: pagination does not end", q)
				}
				p, err := e.Store.List(ctx, q)
				if err != nil {
					t.Fatalf("list %+v: %v", q, err)
				}
				if len(p.Records) > limit {
					t.Fatalf("list %+v: a page of %d records, limit %d", q, len(p.Records), limit)
				}
				out = append(out, p.Records...)
				if p.Next == "" {
					return out
				}
				q.Cursor = p.Next
			}
		}
		// expect checks a filtered listing against the names it must hold
		// and, record by record, against the unfiltered listing in the
		// same order with the filter applied here.
		expect := func(q crawlkeeper.RecordQuery, want ...string) {
			t.Helper()
			sort.Strings(want)
			for _, order := range []crawlkeeper.Order{crawlkeeper.OrderID, crawlkeeper.OrderNewest} {
				q.Order = order
				var oracle []string
				for _, r := range listAll(crawlkeeper.RecordQuery{Archived: q.Archived, Order: order}, 1000) {
					if (q.Source == "" || r.Source == q.Source) && (q.Round == "" || r.LastRound == q.Round) && (q.Target == "" || r.LastTarget == q.Target) {
						oracle = append(oracle, names[r.ID])
					}
				}
				for _, limit := range []int{1, 2, 3, 50} {
					var got []string
					for _, r := range listAll(q, limit) {
						if (q.Round != "" && r.LastRound != q.Round) || (q.Target != "" && r.LastTarget != q.Target) {
							t.Errorf("round %q target %q archived %v: listed %s, of round %q and target %q", q.Round, q.Target, q.Archived, names[r.ID], r.LastRound, r.LastTarget)
						}
						got = append(got, names[r.ID])
					}
					if fmt.Sprint(got) != fmt.Sprint(oracle) {
						t.Errorf("round %q target %q source %q archived %v (order %d, pages of %d): %v, want %v",
							q.Round, q.Target, q.Source, q.Archived, order, limit, got, oracle)
					}
					sorted := append([]string(nil), got...)
					sort.Strings(sorted)
					if fmt.Sprint(sorted) != fmt.Sprint(want) {
						t.Errorf("round %q target %q source %q archived %v (order %d, pages of %d): %v, want %v",
							q.Round, q.Target, q.Source, q.Archived, order, limit, sorted, want)
					}
				}
			}
		}

		// Round 1, with ties on last_updated_at so the newest-first
		// cursor has to break them by id.
		ingest(0, "a", "rounds", "first", "1", "site-a")
		ingest(0, "b", "rounds", "first", "1", "site-b")
		ingest(time.Minute, "c", "rounds", "first", "1", "site-a")
		ingest(time.Minute, "d", "rounds", "first", "", "")
		ingest(2*time.Minute, "e", "other", "first", "1", "site-a")
		ingest(2*time.Minute, "f", "other", "first", "1", "site-b")
		ingest(3*time.Minute, "g", "rounds", "first", "1", "site-a")
		expect(crawlkeeper.RecordQuery{Round: "1"}, "a", "b", "c", "e", "f", "g")
		expect(crawlkeeper.RecordQuery{Target: "site-b"}, "b", "f")

		// Round 2 redelivers a unchanged from another target, b changed
		// without a target (it keeps site-b) and e changed, and brings h.
		ingest(time.Hour, "a", "rounds", "first", "2", "site-b")
		ingest(time.Hour, "b", "rounds", "second", "2", "")
		ingest(time.Hour+time.Minute, "e", "other", "second", "2", "site-a")
		ingest(time.Hour+time.Minute, "h", "rounds", "first", "2", "site-a")
		if r := e.MustGet(ids["b"]); r.LastRound != "2" || r.LastTarget != "site-b" {
			t.Fatalf("b after round 2: round %q target %q, want 2 and site-b", r.LastRound, r.LastTarget)
		}
		expect(crawlkeeper.RecordQuery{}, "a", "b", "c", "d", "e", "f", "g", "h")
		expect(crawlkeeper.RecordQuery{Round: "1"}, "c", "f", "g")
		expect(crawlkeeper.RecordQuery{Round: "2"}, "a", "b", "e", "h")
		expect(crawlkeeper.RecordQuery{Round: "3"})
		expect(crawlkeeper.RecordQuery{Target: "site-a"}, "c", "e", "g", "h")
		expect(crawlkeeper.RecordQuery{Target: "site-b"}, "a", "b", "f")
		expect(crawlkeeper.RecordQuery{Round: "2", Target: "site-a"}, "e", "h")
		expect(crawlkeeper.RecordQuery{Round: "1", Target: "site-b"}, "f")
		expect(crawlkeeper.RecordQuery{Round: "2", Source: "rounds"}, "a", "b", "h")
		expect(crawlkeeper.RecordQuery{Round: "2", Target: "site-b", Source: "rounds"}, "a", "b")
		expect(crawlkeeper.RecordQuery{Round: "1", Source: "other"}, "f")
		expect(crawlkeeper.RecordQuery{Target: "site-a", Source: "other"}, "e")
		expect(crawlkeeper.RecordQuery{Round: "2", Source: "nosuch"})
		// Exact match: no prefix or case folding.
		expect(crawlkeeper.RecordQuery{Target: "site"})
		expect(crawlkeeper.RecordQuery{Target: "SITE-A"})
		expect(crawlkeeper.RecordQuery{Round: "2", Archived: true})

		// Archive moves carry the round and target into the archive's
		// listing.
		for _, name := range []string{"a", "c", "e"} {
			r := e.MustGet(ids[name])
			if moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil || len(moved) != 1 {
				t.Fatalf("archive %s: %v %v", name, moved, err)
			}
		}
		expect(crawlkeeper.RecordQuery{Round: "2"}, "b", "h")
		expect(crawlkeeper.RecordQuery{Target: "site-a"}, "g", "h")
		expect(crawlkeeper.RecordQuery{Round: "2", Archived: true}, "a", "e")
		expect(crawlkeeper.RecordQuery{Round: "2", Source: "other", Archived: true}, "e")
		expect(crawlkeeper.RecordQuery{Target: "site-a", Archived: true}, "c", "e")
		expect(crawlkeeper.RecordQuery{Round: "1", Target: "site-a", Archived: true}, "c")
		expect(crawlkeeper.RecordQuery{Round: "2", Target: "site-b", Source: "rounds", Archived: true}, "a")
		expect(crawlkeeper.RecordQuery{Round: "3", Archived: true})
		e.MustCheck()
	})
}
