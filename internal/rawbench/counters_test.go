package rawbench

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
)

// TestSameCounters checks that the raw writes keep the recrawl advisor's
// delivery counters as crawlkeeper's ingest does: the same items
// delivered new, again unchanged and then changed, an hour apart, through
// crawlkeeper into one store and through the raw Insert, Touch and Change
// into another, leave every record with the same counters. A baseline that
// skipped them would time less work than the ingest it is compared with.
func TestSameCounters(t *testing.T) {
	for _, kind := range []string{testdb.SQLite, testdb.Postgres, testdb.MySQL} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			open := func() crawlkeeper.Store {
				st, err := backends.OpenStore(ctx, testdb.URL(t, kind), t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			ours, other := open(), open()
			raw, err := For(other)
			if err != nil {
				t.Fatal(err)
			}
			const n = 30
			var at time.Time
			g := &crawlkeeper.Ingester{Store: ours, Config: &crawlkeeper.Config{}, Now: func() time.Time { return at }}
			prep := &crawlkeeper.Preparer{Config: &crawlkeeper.Config{}}
			records := func(revision int) []*crawlkeeper.Record {
				var out []*crawlkeeper.Record
				for i, line := range bytes.Split(bytes.TrimSpace(bench.NDJSON(0, n, revision)), []byte("\n")) {
					p, err := prep.Prepare(line, i+1, crawlkeeper.Meta{}, at)
					if err != nil {
						t.Fatal(err)
					}
					r := crawlkeeper.NewRecord(p, at)
					r.ID, r.Version = int64(1+i), int64(revision+1)
					out = append(out, r)
				}
				return out
			}
			deliver := func(revision int) {
				if _, err := g.Ingest(ctx, bytes.NewReader(bench.NDJSON(0, n, revision)), crawlkeeper.Meta{}); err != nil {
					t.Fatal(err)
				}
			}

			at = bench.Now.Add(-2 * time.Hour)
			deliver(0)
			first := records(0)
			if err := raw.Insert(ctx, first); err != nil {
				t.Fatal(err)
			}
			at = bench.Now.Add(-time.Hour)
			deliver(0)
			keys := make([]string, len(first))
			for i, r := range first {
				keys[i] = r.Key
			}
			if err := raw.Touch(ctx, keys, at); err != nil {
				t.Fatal(err)
			}
			at = bench.Now
			deliver(1)
			changed := records(1)
			hist := make([]*crawlkeeper.HistoryEntry, len(first))
			for i, p := range first {
				hist[i] = &crawlkeeper.HistoryEntry{RecordID: p.ID, Version: p.Version, Item: p.Item, ContentHash: p.ContentHash, ValidFrom: p.CrawledAt, ValidTo: at}
			}
			if err := raw.Change(ctx, changed, hist); err != nil {
				t.Fatal(err)
			}

			counts := func(st crawlkeeper.Store) map[string]crawlkeeper.FetchCounts {
				page, err := st.List(ctx, crawlkeeper.RecordQuery{Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]crawlkeeper.FetchCounts{}
				for _, r := range page.Records {
					if r.Fetches == nil {
						t.Fatalf("record %q has no counters", r.Key)
					}
					out[r.Key] = *r.Fetches
				}
				return out
			}
			want, got := counts(ours), counts(other)
			if len(want) != n || len(got) != n {
				t.Fatalf("%d records through crawlkeeper and %d raw, want %d each", len(want), len(got), n)
			}
			for k, w := range want {
				r := got[k]
				if w.Refetches != 2 || w.Changes != 1 {
					t.Fatalf("crawlkeeper counted %+v for %q, want two refetches and one change", w, k)
				}
				if r.Refetches != w.Refetches || r.Changes != w.Changes || r.ChangedUS != w.ChangedUS || r.UnchangedUS != w.UnchangedUS ||
					math.Abs(r.ChangedLog-w.ChangedLog) > 1e-6 {
					t.Errorf("record %q: raw counters %+v, crawlkeeper's %+v", k, r, w)
				}
			}
		})
	}
}
