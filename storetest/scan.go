package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func testScan(t *testing.T, open func(tb testing.TB) ScanBackend) {
	ctx := context.Background()
	e := NewEnv(t, open)
	var ids []int64
	for i := 0; i < 12; i++ {
		ids = append(ids, e.Ingest(item(fmt.Sprint("S", i), "https://scan.test/")).IDs[0])
	}
	// Archive one record in the middle: scans skip it, MaxID still counts it.
	r := e.MustGet(ids[5])
	if _, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil {
		t.Fatal(err)
	}
	last := e.Ingest(item("last", "https://scan.test/")).IDs[0]
	archiveLast := e.MustGet(last)
	if moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: last, Version: 1, LastUpdatedAt: archiveLast.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil || len(moved) != 1 {
		t.Fatalf("archive of the last record moved %v (%v)", moved, err)
	}

	t.Run("ScanActive", func(t *testing.T) {
		var seen []int64
		after := int64(0)
		for {
			recs, err := e.Store.ScanActive(ctx, after, 0, 5)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				seen = append(seen, r.ID)
				if len(r.Item) == 0 || r.Key == "" {
					t.Fatalf("scan returned a partial record: %+v", r)
				}
			}
			if len(recs) < 5 {
				break
			}
			after = recs[len(recs)-1].ID
		}
		want := append(append([]int64{}, ids[:5]...), ids[6:]...)
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Fatalf("scan = %v, want %v", seen, want)
		}
		bounded, err := e.Store.ScanActive(ctx, ids[1], ids[3], 100)
		if err != nil || len(bounded) != 2 || bounded[0].ID != ids[2] || bounded[1].ID != ids[3] {
			t.Fatalf("bounded scan = %v %v", bounded, err)
		}
	})

	t.Run("MaxID", func(t *testing.T) {
		max, err := e.Store.MaxID(ctx)
		if err != nil || max != last {
			t.Fatalf("max id = %d %v, want %d (archived ids count)", max, err, last)
		}
	})

	t.Run("GetMany", func(t *testing.T) {
		recs, err := e.Store.GetMany(ctx, []int64{ids[7], ids[5], ids[0], 999999})
		if err != nil || len(recs) != 2 || recs[0].ID != ids[0] || recs[1].ID != ids[7] {
			t.Fatalf("get many = %v %v (archived and missing ids are skipped)", recs, err)
		}
	})

	t.Run("WriteProcessed", func(t *testing.T) {
		e.Now = T0.Add(time.Minute)
		e.Ingest(item("S1", "https://scan.test/", "changed", "yes")) // ids[1] is now version 2
		at := T0.Add(time.Hour)
		ev := T0.Add(72 * time.Hour)
		skipped, err := e.Store.WriteProcessed(ctx, []crawlkeeper.ProcessedWrite{
			{ID: ids[0], Version: 1, ProcessedAt: at, Chain: "c1", Derived: json.RawMessage(`{"n":1}`)},
			{ID: ids[1], Version: 1, ProcessedAt: at, Chain: "c1"},
			{ID: ids[2], Version: 1, ProcessedAt: at, Chain: "c1", SetEvent: true, EventAt: &ev, DateErrors: []string{"bad"}},
			{ID: ids[5], Version: 1, ProcessedAt: at, Chain: "c1"},
		})
		if err != nil || fmt.Sprint(skipped) != fmt.Sprint([]int64{ids[1], ids[5]}) {
			t.Fatalf("skipped = %v %v, want the changed and the archived record", skipped, err)
		}
		r0 := e.MustGet(ids[0])
		if r0.ProcessedAt == nil || !r0.ProcessedAt.Equal(at) || r0.ProcessedVersion != 1 || r0.ProcessedChain != "c1" || string(r0.Derived) != `{"n":1}` {
			t.Fatalf("processed record = %+v", r0)
		}
		if r := e.MustGet(ids[1]); r.ProcessedAt != nil {
			t.Fatalf("a stale write-back was applied: %+v", r)
		}
		if r := e.MustGet(ids[2]); r.EventAt == nil || !r.EventAt.Equal(ev) || len(r.DateErrors) != 1 {
			t.Fatalf("event write-back: %+v", r)
		}
	})

	t.Run("Freshness", func(t *testing.T) {
		fresh := func(q crawlkeeper.FreshnessQuery) *crawlkeeper.Freshness {
			t.Helper()
			f, err := e.Store.Freshness(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		f := fresh(crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: T0.Add(2 * time.Hour)})
		// 11 active: ids[0] and ids[2] processed (but before the due time),
		// the rest never.
		if f.Active != 11 || f.NeverProcessed != 9 || f.Due != 11 || f.OldestProcessedAt == nil || !f.OldestProcessedAt.Equal(T0.Add(time.Hour)) {
			t.Fatalf("freshness = %+v", f)
		}
		if f := fresh(crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: T0}); f.Due != 9 {
			t.Fatalf("due with an earlier cutoff = %d, want 9", f.Due)
		}
		if f := fresh(crawlkeeper.FreshnessQuery{Chain: "c2", DueBefore: T0}); f.Due != 11 {
			t.Fatalf("a new chain makes every record due, got %d", f.Due)
		}
	})

	t.Run("FreshnessCovered", func(t *testing.T) {
		// A pass that covered a current record processed it at or after
		// the span's time, though its processed_at stayed (see
		// crawlkeeper.FreshnessQuery).
		due := T0.Add(2 * time.Hour)
		span := func(after, through int64, at time.Duration) crawlkeeper.CoveredSpan {
			return crawlkeeper.CoveredSpan{After: after, Through: through, At: T0.Add(at)}
		}
		type want struct {
			name       string
			q          crawlkeeper.FreshnessQuery
			due, never int64
			oldest     time.Duration
		}
		cases := []want{
			{"ids[0] covered", crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: due, Covered: []crawlkeeper.CoveredSpan{span(0, ids[0], 3*time.Hour)}},
				10, 9, time.Hour},
			{"both covered, ids[1] (never processed) too", crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: due, Covered: []crawlkeeper.CoveredSpan{
				span(0, ids[1], 3*time.Hour), span(ids[1], ids[3], 4*time.Hour)}}, 9, 9, 3 * time.Hour},
			{"a span older than processed_at", crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: due, Covered: []crawlkeeper.CoveredSpan{span(0, last, 0)}},
				11, 9, time.Hour},
			{"another chain", crawlkeeper.FreshnessQuery{Chain: "c2", DueBefore: due, Covered: []crawlkeeper.CoveredSpan{span(0, last, 3*time.Hour)}},
				11, 9, 3 * time.Hour},
			{"spans between the records", crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: due, Covered: []crawlkeeper.CoveredSpan{
				span(ids[0], ids[1], 5*time.Hour), span(ids[2], ids[4], 5*time.Hour)}}, 11, 9, time.Hour},
		}
		// Many narrow spans, as a long pass leaves: one per id, each a
		// minute later than the one before, ids[2]'s among them.
		var many []crawlkeeper.CoveredSpan
		for id := int64(1); id <= last+300; id++ {
			many = append(many, span(id-1, id, 3*time.Hour+time.Duration(id)*time.Minute))
		}
		cases = append(cases, want{"one span per id",
			crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: T0.Add(3*time.Hour + time.Duration(ids[2])*time.Minute), Covered: many},
			10, 9, 3*time.Hour + time.Duration(ids[0])*time.Minute})
		for _, c := range cases {
			f, err := e.Store.Freshness(ctx, c.q)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if f.Active != 11 || f.Due != c.due || f.NeverProcessed != c.never || f.OldestProcessedAt == nil || !f.OldestProcessedAt.Equal(T0.Add(c.oldest)) {
				t.Fatalf("%s: freshness = %+v (oldest %v), want due %d, never %d, oldest %v", c.name, f, f.OldestProcessedAt, c.due, c.never, T0.Add(c.oldest))
			}
		}
		bad := crawlkeeper.FreshnessQuery{Chain: "c1", DueBefore: due, Covered: []crawlkeeper.CoveredSpan{span(0, 5, 0), span(4, 9, 0)}}
		if _, err := e.Store.Freshness(ctx, bad); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
			t.Fatalf("overlapping spans: %v, want an EINVALID error", err)
		}
	})
}

func testState(t *testing.T, s crawlkeeper.StateStore) {
	ctx := context.Background()
	t.Run("KV", func(t *testing.T) {
		if v, err := s.GetState(ctx, "missing"); v != nil || err != nil {
			t.Fatalf("missing state = %q %v", v, err)
		}
		ok(t, s.PutState(ctx, "scan", []byte("one")))
		ok(t, s.PutState(ctx, "scan", []byte("two")))
		if v, err := s.GetState(ctx, "scan"); string(v) != "two" || err != nil {
			t.Fatalf("state = %q %v", v, err)
		}
	})
	t.Run("Journal", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			if err := s.AppendJournal(ctx, "run", T0.Add(time.Duration(i)*time.Minute), json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
				t.Fatal(err)
			}
		}
		ok(t, s.AppendJournal(ctx, "other", T0, json.RawMessage(`{}`)))
		got, err := s.Journal(ctx, "run", 2)
		if err != nil || len(got) != 2 || string(got[0].Body) != `{"i":2}` || !got[1].At.Equal(T0.Add(time.Minute)) {
			t.Fatalf("journal = %+v %v", got, err)
		}
	})
	t.Run("Lease", func(t *testing.T) {
		ttl := time.Minute
		acquire := func(name, owner string, at time.Time) bool {
			t.Helper()
			held, err := s.AcquireLease(ctx, name, owner, ttl, at)
			ok(t, err)
			return held
		}
		if held := acquire("archiver", "p1", T0); !held {
			t.Fatal("first acquire failed")
		}
		if held := acquire("archiver", "p2", T0.Add(30*time.Second)); held {
			t.Fatal("a held lease was taken by another owner")
		}
		if held := acquire("archiver", "p1", T0.Add(50*time.Second)); !held {
			t.Fatal("the owner could not renew")
		}
		if held := acquire("archiver", "p2", T0.Add(100*time.Second)); held {
			t.Fatal("a renewed lease expired early")
		}
		if held := acquire("archiver", "p2", T0.Add(111*time.Second)); !held {
			t.Fatal("an expired lease was not taken over")
		}
		if held := acquire("scan", "p1", T0); !held {
			t.Fatal("leases with different names must be independent")
		}
		ok(t, s.ReleaseLease(ctx, "archiver", "p1")) // not the owner: no effect
		if held := acquire("archiver", "p1", T0.Add(112*time.Second)); held {
			t.Fatal("release by a non-owner freed the lease")
		}
		ok(t, s.ReleaseLease(ctx, "archiver", "p2"))
		if held := acquire("archiver", "p1", T0.Add(113*time.Second)); !held {
			t.Fatal("a released lease could not be taken")
		}
	})
	t.Run("DeadLetters", func(t *testing.T) {
		ok(t, s.AddDeadLetter(ctx, crawlkeeper.DeadLetter{ID: 7, Version: 1, Processor: "exec", Error: "boom", Failures: 3, At: T0}))
		ok(t, s.AddDeadLetter(ctx, crawlkeeper.DeadLetter{ID: 3, Version: 2, Processor: "extract", Error: "bad html", Failures: 3, At: T0.Add(time.Second)}))
		ok(t, s.AddDeadLetter(ctx, crawlkeeper.DeadLetter{ID: 7, Version: 2, Processor: "exec", Error: "boom again", Failures: 4, At: T0.Add(2 * time.Second)}))
		got, err := s.DeadLetters(ctx, 10)
		if err != nil || len(got) != 2 || got[0].ID != 3 || got[1].Error != "boom again" || got[1].Failures != 4 {
			t.Fatalf("dead letters = %+v %v", got, err)
		}
		removed, err := s.RemoveDeadLetters(ctx, []int64{7, 99})
		if err != nil || fmt.Sprint(removed) != "[7]" {
			t.Fatalf("remove = %v %v", removed, err)
		}
		removed, err = s.RemoveDeadLetters(ctx, nil)
		ok(t, err)
		if fmt.Sprint(removed) != "[3]" {
			t.Fatalf("remove all = %v", removed)
		}
	})
}
