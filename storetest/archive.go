package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func testArchive(t *testing.T, open func(tb testing.TB) ArchiveBackend) {
	ctx := context.Background()
	day := 24 * time.Hour

	// seed ingests records of two sources at different times; ids are
	// returned in ingest order.
	seed := func(e *Env[ArchiveBackend]) []int64 {
		var ids []int64
		for i := 0; i < 10; i++ {
			e.Now = T0.Add(time.Duration(i) * day)
			src := "a"
			if i%2 == 1 {
				src = "b"
			}
			deadline := ""
			if i == 3 || i == 8 {
				deadline = fmt.Sprintf(`,"deadline":%q`, T0.Add(time.Duration(i+1)*day).Format(time.RFC3339))
			}
			res := e.Ingest(fmt.Sprintf(`{"title":"r%d","url":"https://a.test/%d","_source":%q%s}`, i, i, src, deadline))
			ids = append(ids, res.IDs[0])
		}
		return ids
	}

	t.Run("SelectDue", func(t *testing.T) {
		e := NewEnv(t, open)
		ids := seed(e)
		sel := func(q crawlkeeper.DueQuery) []int64 {
			t.Helper()
			var out []int64
			for {
				page, err := e.Store.SelectDue(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for i, d := range page {
					out = append(out, d.ID)
					r := e.MustGet(d.ID)
					want := r.CrawledAt
					switch q.Rule {
					case crawlkeeper.DueByStale:
						want = r.LastUpdatedAt
					case crawlkeeper.DueByEvent:
						want = *r.EventAt
					}
					if (i == len(page)-1 && !d.At.Equal(want)) || d.Version != r.Version || !d.LastUpdatedAt.Equal(r.LastUpdatedAt) {
						t.Fatalf("due record %+v does not match the stored record %+v", d, r)
					}
				}
				if len(page) < q.Limit || len(page) == 0 {
					return out
				}
				q.After = page[len(page)-1].Cursor()
			}
		}
		got := sel(crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: T0.Add(4 * day), Limit: 2})
		if fmt.Sprint(got) != fmt.Sprint(ids[:5]) {
			t.Fatalf("age selection = %v, want %v", got, ids[:5])
		}
		got = sel(crawlkeeper.DueQuery{Rule: crawlkeeper.DueByStale, Cutoff: T0.Add(4 * day), Sources: []string{"b"}, Limit: 10})
		if fmt.Sprint(got) != fmt.Sprint([]int64{ids[1], ids[3]}) {
			t.Fatalf("stale selection of source b = %v", got)
		}
		got = sel(crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: T0.Add(4 * day), Exclude: []string{"b"}, Limit: 10})
		if fmt.Sprint(got) != fmt.Sprint([]int64{ids[0], ids[2], ids[4]}) {
			t.Fatalf("age selection without source b = %v", got)
		}
		got = sel(crawlkeeper.DueQuery{Rule: crawlkeeper.DueByEvent, Cutoff: T0.Add(20 * day), Limit: 1})
		if fmt.Sprint(got) != fmt.Sprint([]int64{ids[3], ids[8]}) {
			t.Fatalf("event selection = %v, want the two records with deadlines", got)
		}
		// Except: records 3 (deadline day 4) and 8 (day 9) are due by the
		// event rule at day 20, so an age selection that excepts it
		// leaves them out; records without a deadline are never event-due.
		got = sel(crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: T0.Add(9 * day), Limit: 3,
			Except: []crawlkeeper.DueCondition{{Rule: crawlkeeper.DueByEvent, Cutoff: T0.Add(20 * day)}}})
		if want := []int64{ids[0], ids[1], ids[2], ids[4], ids[5], ids[6], ids[7], ids[9]}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("age selection except event-due = %v, want %v", got, want)
		}
		got = sel(crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: T0.Add(9 * day), Limit: 10,
			Except: []crawlkeeper.DueCondition{{Rule: crawlkeeper.DueByEvent, Cutoff: T0.Add(6 * day)}, {Rule: crawlkeeper.DueByStale, Cutoff: T0.Add(1 * day)}}})
		if want := []int64{ids[2], ids[4], ids[5], ids[6], ids[7], ids[8], ids[9]}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("age selection except event-due by day 6 and stale by day 1 = %v, want %v", got, want)
		}
		if _, err := e.Store.SelectDue(ctx, crawlkeeper.DueQuery{Rule: "nonsense", Cutoff: T0}); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
			t.Fatalf("unknown rule: %v", err)
		}
	})

	t.Run("MoveIsConditional", func(t *testing.T) {
		e := NewEnv(t, open)
		ids := seed(e)
		due, err := e.Store.SelectDue(ctx, crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: T0.Add(2 * day), Limit: 10})
		if err != nil || len(due) != 3 {
			t.Fatalf("due = %v, %v", due, err)
		}
		// Record 1 is re-crawled (unchanged) after selection and record 2
		// changes: only record 0 may move.
		e.Now = T0.Add(20 * day)
		e.Ingest(`{"title":"r1","url":"https://a.test/1","_source":"b"}`, `{"title":"r2","url":"https://a.test/2","_source":"a","new":"content"}`)
		var moves []crawlkeeper.Move
		for _, d := range due {
			moves = append(moves, crawlkeeper.Move{ID: d.ID, Version: d.Version, LastUpdatedAt: d.LastUpdatedAt, Reason: crawlkeeper.ReasonAge})
		}
		moved, err := e.Store.Archive(ctx, moves, e.Now)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(moved) != fmt.Sprint([]int64{ids[0]}) {
			t.Fatalf("moved %v, want only %d", moved, ids[0])
		}
		again, err := e.Store.Archive(ctx, moves, e.Now)
		if err != nil || len(again) != 0 {
			t.Fatalf("re-running a move: %v %v", again, err)
		}
		r := e.MustGet(ids[0])
		if !r.Archived() || r.ArchiveReason != crawlkeeper.ReasonAge || !r.ArchivedAt.Equal(e.Now) || !r.CrawledAt.Equal(T0) {
			t.Fatalf("archived record = %+v", r)
		}
		page, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Archived: true})
		if err != nil || len(page.Records) != 1 || page.Records[0].ID != ids[0] {
			t.Fatalf("archive listing = %v %v", page, err)
		}
		active, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Limit: 100})
		ok(t, err)
		if len(active.Records) != 9 {
			t.Fatalf("%d active records, want 9", len(active.Records))
		}
		st, err := e.Store.Stats(ctx)
		ok(t, err)
		if st.Active != 9 || st.Archived != 1 || st.Sources["a"].ArchivedByReason[crawlkeeper.ReasonAge] != 1 || st.ArchiveRawBytes <= 0 || st.ArchiveStoredBytes <= 0 {
			t.Fatalf("stats = %+v, a = %+v", st, st.Sources["a"])
		}
		e.MustCheck()
	})

	archiveOne := func(e *Env[ArchiveBackend], id int64, reason crawlkeeper.ArchiveReason) {
		t.Helper()
		r := e.MustGet(id)
		moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: reason}}, e.Now)
		if err != nil || len(moved) != 1 {
			t.Fatalf("archive %d: %v %v", id, moved, err)
		}
	}

	t.Run("ReviveKeepsIdentity", func(t *testing.T) {
		e := NewEnv(t, open)
		id := e.Ingest(item("R", "https://r.test/1", "v", "1")).IDs[0]
		e.Now = T0.Add(time.Hour)
		e.Ingest(item("R", "https://r.test/1", "v", "2"))
		e.Now = T0.Add(2 * time.Hour)
		archiveOne(e, id, crawlkeeper.ReasonManual)
		e.Now = T0.Add(3 * time.Hour)
		res := e.Ingest(item("R", "https://r.test/1", "v", "3"))
		if res.Outcomes[0] != crawlkeeper.OutcomeRevived || res.IDs[0] != id {
			t.Fatalf("revive: %v id %d", res.Outcomes, res.IDs[0])
		}
		if len(res.Touched) != 1 || res.Touched[0].ID != id {
			t.Fatalf("a revived record must be handed to processing: %v", res.Touched)
		}
		r := e.MustGet(id)
		if r.Archived() || r.Version != 3 || !r.CrawledAt.Equal(T0) || !r.LastUpdatedAt.Equal(e.Now) {
			t.Fatalf("revived = %+v", r)
		}
		hist, err := e.Store.History(ctx, id)
		ok(t, err)
		if len(hist) != 2 {
			t.Fatalf("history after revive: %d versions, want 2", len(hist))
		}
		e.MustCheck()
	})

	t.Run("RefreshInArchive", func(t *testing.T) {
		e := NewEnv(t, open)
		id := e.Ingest(item("F", "https://f.test/1")).IDs[0]
		archiveOne(e, id, crawlkeeper.ReasonEvent)
		e.Now = T0.Add(time.Hour)
		b := &crawlkeeper.IngestBatch{Now: e.Now, Items: []*crawlkeeper.Prepared{e.Prepare(item("F", "https://f.test/1", "x", "changed"))},
			Due: func(*crawlkeeper.Record) (crawlkeeper.ArchiveReason, bool) { return crawlkeeper.ReasonEvent, true }}
		res, err := e.Store.Ingest(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcomes[0] != crawlkeeper.OutcomeRefreshed || len(res.Touched) != 0 {
			t.Fatalf("refresh: %v touched %v", res.Outcomes, res.Touched)
		}
		r := e.MustGet(id)
		if !r.Archived() || r.Version != 2 || !r.LastUpdatedAt.Equal(e.Now) || !r.ArchivedAt.Equal(T0) || r.ArchiveReason != crawlkeeper.ReasonEvent {
			t.Fatalf("refreshed archived record = %+v", r)
		}
		hist, err := e.Store.History(ctx, id)
		ok(t, err)
		if len(hist) != 1 {
			t.Fatalf("history of refreshed record: %d", len(hist))
		}
		e.MustCheck()
	})

	t.Run("Restore", func(t *testing.T) {
		e := NewEnv(t, open)
		res := e.Ingest(item("S", "https://s.test/1"), item("S", "https://s.test/2"))
		archiveOne(e, res.IDs[0], crawlkeeper.ReasonManual)
		got, err := e.Store.Restore(ctx, []int64{res.IDs[0], res.IDs[1], 424242})
		if err != nil || fmt.Sprint(got) != fmt.Sprint([]int64{res.IDs[0]}) {
			t.Fatalf("restore = %v %v", got, err)
		}
		if r := e.MustGet(res.IDs[0]); r.Archived() || r.ArchiveReason != "" {
			t.Fatalf("restored = %+v", r)
		}
		e.MustCheck()
	})

	t.Run("UpdateEvents", func(t *testing.T) {
		e := NewEnv(t, open)
		res := e.Ingest(item("U", "https://u.test/1"), item("U", "https://u.test/2"))
		e.Now = T0.Add(time.Minute)
		e.Ingest(item("U", "https://u.test/2", "changed", "yes"))
		ev := T0.Add(48 * time.Hour)
		n, err := e.Store.UpdateEvents(ctx, []crawlkeeper.EventUpdate{
			{ID: res.IDs[0], Version: 1, EventAt: &ev, DateErrors: []string{"x"}},
			{ID: res.IDs[1], Version: 1, EventAt: &ev},
		})
		if err != nil || n != 1 {
			t.Fatalf("update events: %d %v, want 1 (the second record changed)", n, err)
		}
		if r := e.MustGet(res.IDs[0]); r.EventAt == nil || !r.EventAt.Equal(ev) || len(r.DateErrors) != 1 {
			t.Fatalf("record = %+v", r)
		}
		if r := e.MustGet(res.IDs[1]); r.EventAt != nil {
			t.Fatalf("stale update applied: %+v", r)
		}
	})

	t.Run("MoveRechecksEvent", func(t *testing.T) {
		// Records 3 and 8 have deadlines on days 4 and 9 and are selected
		// by the event rule; then record 3's dates are read again and its
		// deadline moves to day 30, with no new version. Its move must not
		// apply: it is no longer due.
		e := NewEnv(t, open)
		ids := seed(e)
		cutoff := T0.Add(10 * day)
		due, err := e.Store.SelectDue(ctx, crawlkeeper.DueQuery{Rule: crawlkeeper.DueByEvent, Cutoff: cutoff, Limit: 10})
		if err != nil || len(due) != 2 {
			t.Fatalf("due = %v, %v", due, err)
		}
		later := T0.Add(30 * day)
		if n, err := e.Store.UpdateEvents(ctx, []crawlkeeper.EventUpdate{{ID: ids[3], Version: 1, EventAt: &later}}); err != nil || n != 1 {
			t.Fatalf("update events: %d %v", n, err)
		}
		var moves []crawlkeeper.Move
		for _, d := range due {
			moves = append(moves, crawlkeeper.Move{ID: d.ID, Version: d.Version, LastUpdatedAt: d.LastUpdatedAt, Reason: crawlkeeper.ReasonEvent, EventBefore: &cutoff})
		}
		moved, err := e.Store.Archive(ctx, moves, T0.Add(11*day))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(moved) != fmt.Sprint([]int64{ids[8]}) {
			t.Fatalf("moved %v, want only %d (record %d was re-dated after selection)", moved, ids[8], ids[3])
		}
		if r := e.MustGet(ids[3]); r.Archived() {
			t.Fatalf("re-dated record archived: %+v", r)
		}
		e.MustCheck()
	})

	t.Run("Purge", func(t *testing.T) {
		e := NewEnv(t, open)
		res := e.Ingest(`{"title":"p","url":"https://p.test/1","_source":"a"}`, `{"title":"p","url":"https://p.test/2","_source":"b"}`, `{"title":"p","url":"https://p.test/3","_source":"a"}`)
		e.Now = T0.Add(time.Hour)
		e.Ingest(`{"title":"p","url":"https://p.test/1","_source":"a","v":2}`)
		for _, id := range res.IDs[:2] {
			archiveOne(e, id, crawlkeeper.ReasonAge)
		}
		src := "a"
		old, err := e.Store.ArchivedBefore(ctx, &src, T0.Add(2*time.Hour), 0, 10)
		if err != nil || len(old) != 1 || old[0].ID != res.IDs[0] || string(old[0].Item) == "" {
			t.Fatalf("archived before = %v %v", old, err)
		}
		all, err := e.Store.ArchivedBefore(ctx, nil, T0.Add(2*time.Hour), 0, 10)
		ok(t, err)
		if len(all) != 2 {
			t.Fatalf("archived before, all sources: %d", len(all))
		}
		if none, err := e.Store.ArchivedBefore(ctx, nil, T0.Add(time.Minute), 0, 10); err != nil || len(none) != 0 {
			t.Fatalf("archived before an earlier time: %d", len(none))
		}
		// The exported state of the archived record, then a re-crawl that
		// keeps it archived (the rules still call it due) but refreshes it:
		// a purge decided on the exported state must keep it.
		exported := crawlkeeper.StateOf(e.MustGet(res.IDs[0]))
		hist, err := e.Store.HistoryMany(ctx, []int64{res.IDs[0], res.IDs[1], res.IDs[2], 999999})
		if err != nil {
			t.Fatalf("history many: %v", err)
		}
		if len(hist) != 1 || len(hist[res.IDs[0]]) != 1 || hist[res.IDs[0]][0].Version != 1 {
			t.Fatalf("history many = %+v, want version 1 of record %d only", hist, res.IDs[0])
		}
		e.Now = T0.Add(2 * time.Hour)
		keep := func(*crawlkeeper.Record) (crawlkeeper.ArchiveReason, bool) { return crawlkeeper.ReasonAge, true }
		refreshed, err := e.Store.Ingest(ctx, &crawlkeeper.IngestBatch{Now: e.Now, Due: keep,
			Items: []*crawlkeeper.Prepared{e.Prepare(`{"title":"p","url":"https://p.test/1","_source":"a","v":2}`)}})
		if err != nil || refreshed.Outcomes[0] != crawlkeeper.OutcomeRefreshed {
			t.Fatalf("re-crawl of an archived record: %+v %v", refreshed, err)
		}
		pr, err := e.Store.Purge(ctx, []crawlkeeper.RecordState{exported, crawlkeeper.StateOf(e.MustGet(res.IDs[2]))})
		if err != nil {
			t.Fatalf("purge: %v", err)
		}
		if len(pr.Purged) != 0 || len(pr.Changed) != 1 || pr.Changed[0] != res.IDs[0] {
			t.Fatalf("purge of a record refreshed after its export = %+v, want it kept as changed (and the active record untouched)", pr)
		}
		if r := e.MustGet(res.IDs[0]); !r.Archived() || !r.LastUpdatedAt.Equal(e.Now) {
			t.Fatalf("refreshed archived record after a stale purge: %+v", r)
		}
		pr, err = e.Store.Purge(ctx, []crawlkeeper.RecordState{crawlkeeper.StateOf(e.MustGet(res.IDs[0])), crawlkeeper.StateOf(e.MustGet(res.IDs[2]))})
		if err != nil || len(pr.Purged) != 1 || pr.Purged[0] != res.IDs[0] || len(pr.Changed) != 0 {
			t.Fatalf("purge: %+v %v (an active record must not be purged)", pr, err)
		}
		if _, err := e.Store.Get(ctx, res.IDs[0]); crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
			t.Fatalf("purged record still there: %v", err)
		}
		e.MustGet(res.IDs[2])
		st, err := e.Store.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.History != 0 {
			t.Fatalf("history of a purged record kept: %d", st.History)
		}
		// The key of a purged record is free again: the same item is a
		// new record.
		again := e.Ingest(`{"title":"p","url":"https://p.test/1","_source":"a","v":2}`)
		if again.Outcomes[0] != crawlkeeper.OutcomeInserted || again.IDs[0] == res.IDs[0] {
			t.Fatalf("ingest after purge = %+v", again)
		}
		e.MustCheck()
	})

	t.Run("ArchiveStats", func(t *testing.T) {
		e := NewEnv(t, open)
		var ids []int64
		for i, life := range []time.Duration{time.Hour, 3 * time.Hour, 10 * time.Hour} {
			e.Now = T0
			id := e.Ingest(item(fmt.Sprint("L", i), "https://l.test/")).IDs[0]
			e.Now = T0.Add(life)
			e.Ingest(item(fmt.Sprint("L", i), "https://l.test/", "v", "2"))
			ids = append(ids, id)
		}
		e.Now = T0.Add(11 * time.Hour)
		for _, id := range ids {
			archiveOne(e, id, crawlkeeper.ReasonStale)
		}
		st, err := e.Store.ArchiveStats(ctx, e.Now)
		if err != nil {
			t.Fatal(err)
		}
		s := st[""]
		if s == nil || s.MedianLifetimeS == nil || *s.MedianLifetimeS != 3*3600 {
			t.Fatalf("median lifetime = %+v", s)
		}
		if s.ChangesPerWeek == nil || *s.ChangesPerWeek != 0.75 {
			t.Fatalf("changes per week = %v, want 3 changes / 4 weeks", s.ChangesPerWeek)
		}
	})
}
