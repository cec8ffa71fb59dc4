// Package storetest is the conformance suite of crawlkeeper.Store. Every
// backend's tests call Run with a function that opens an empty store; a
// backend passes when every subtest passes unchanged.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Opener opens a new, empty store for one subtest. The store is closed by
// the suite.
type Opener func(tb testing.TB) crawlkeeper.Store

// T0 is the suite's reference time.
var T0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Run runs every conformance test against stores made by open: the suite
// of each role in turn.
func Run(t *testing.T, open Opener) {
	t.Run("Records", func(t *testing.T) { RunRecords(t, func(tb testing.TB) crawlkeeper.RecordStore { return open(tb) }) })
	t.Run("Archive", func(t *testing.T) { RunArchive(t, func(tb testing.TB) ArchiveBackend { return open(tb) }) })
	t.Run("Scan", func(t *testing.T) { RunScan(t, func(tb testing.TB) ScanBackend { return open(tb) }) })
	t.Run("Rescan", func(t *testing.T) { RunRescan(t, open) })
	t.Run("State", func(t *testing.T) { RunState(t, func(tb testing.TB) crawlkeeper.StateStore { return open(tb) }) })
	t.Run("LeaseOwner", func(t *testing.T) {
		RunLeaseReader(t, func(tb testing.TB) LeaseBackend {
			s := open(tb)
			lb, isLB := s.(LeaseBackend)
			if !isLB {
				s.Close()
				tb.Fatalf("%T does not implement crawlkeeper.LeaseReader", s)
			}
			return lb
		})
	})
	t.Run("KeyRules", func(t *testing.T) {
		RunKeyRules(t, func(tb testing.TB) crawlkeeper.KeyRulesBackend { return open(tb) })
	})
	t.Run("Search", func(t *testing.T) { RunSearch(t, func(tb testing.TB) SearchBackend { return open(tb) }) })
	t.Run("Rekey", func(t *testing.T) { RunRekey(t, func(tb testing.TB) RekeyBackend { return open(tb) }) })
	t.Run("Recrawl", func(t *testing.T) { RunRecrawl(t, func(tb testing.TB) RecrawlBackend { return open(tb) }) })
}

// A new backend is built and tested one role at a time, in this order:
// records first (everything else needs records to exist), then the
// archive, then scans (which check that archived records are skipped),
// and state, which stands alone.
type (
	// RecordOpener opens an empty store that plays the records role.
	RecordOpener func(tb testing.TB) crawlkeeper.RecordStore
	// ArchiveBackend is a store with the records and archive roles.
	ArchiveBackend interface {
		crawlkeeper.RecordStore
		crawlkeeper.ArchiveStore
	}
	// ScanBackend is a store with the records, archive and scan roles.
	ScanBackend interface {
		ArchiveBackend
		crawlkeeper.ScanStore
	}
)

// RunRecords runs the conformance tests of crawlkeeper.RecordStore.
func RunRecords(t *testing.T, open RecordOpener) {
	t.Run("Ingest", func(t *testing.T) { testIngest(t, open) })
	t.Run("Get", func(t *testing.T) { testGet(t, open) })
	t.Run("List", func(t *testing.T) { testList(t, open) })
	t.Run("Stats", func(t *testing.T) { testStats(t, open) })
	t.Run("Check", func(t *testing.T) { testCheck(t, open) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, open) })
	t.Run("Golden", func(t *testing.T) { testGolden(t, open) })
	t.Run("Durability", func(t *testing.T) { testDurability(t, open) })
	t.Run("Keys", func(t *testing.T) { testKeyPairs(t, open) })
	t.Run("Deliveries", func(t *testing.T) { testDeliveries(t, open) })
	t.Run("FetchCounts", func(t *testing.T) { testFetchCounts(t, open) })
}

// testDurability checks that the store reports what its acknowledged
// writes survive, and that a store opened with the default options
// promises durability full.
func testDurability(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	dr, isReporter := e.Store.(crawlkeeper.DurabilityReporter)
	if !isReporter {
		t.Fatalf("%T does not report its durability (crawlkeeper.DurabilityReporter)", e.Store)
	}
	st, err := dr.DurabilityStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Setting != crawlkeeper.DurabilityFull || st.Detail == "" {
		t.Fatalf("durability of a store opened with the defaults = %+v, want setting full and a detail", st)
	}
}

// RunArchive runs the conformance tests of crawlkeeper.ArchiveStore.
func RunArchive(t *testing.T, open func(tb testing.TB) ArchiveBackend) {
	testArchive(t, open)
	t.Run("DateErrorCounts", func(t *testing.T) { testDateErrorCounts(t, open) })
	testMoveListing(t, open)
	testListRounds(t, open)
}

// RunScan runs the conformance tests of crawlkeeper.ScanStore.
func RunScan(t *testing.T, open func(tb testing.TB) ScanBackend) { testScan(t, open) }

// RunState runs the conformance tests of crawlkeeper.StateStore.
func RunState(t *testing.T, open func(tb testing.TB) crawlkeeper.StateStore) {
	s := open(t)
	if c, ok := s.(interface{ Close() error }); ok {
		t.Cleanup(func() { c.Close() })
	}
	testState(t, s)
}

// Env bundles a store with a preparer and a settable clock for tests.
type Env[S crawlkeeper.RecordStore] struct {
	TB     testing.TB
	Store  S
	Config *crawlkeeper.Config
	Now    time.Time
}

// NewEnv opens a store for a test and closes it when the test ends.
func NewEnv[S crawlkeeper.RecordStore](tb testing.TB, open func(tb testing.TB) S) *Env[S] {
	tb.Helper()
	s := open(tb)
	tb.Cleanup(func() { s.Close() })
	return &Env[S]{TB: tb, Store: s, Config: &crawlkeeper.Config{}, Now: T0}
}

// Prepare builds a prepared item from JSON text, failing the test on error.
func (e *Env[S]) Prepare(js string) *crawlkeeper.Prepared {
	e.TB.Helper()
	p, err := (&crawlkeeper.Preparer{Config: e.Config}).Prepare([]byte(js), 1, crawlkeeper.Meta{}, e.Now)
	if err != nil {
		e.TB.Fatalf("prepare %s: %v", js, err)
	}
	return p
}

// Ingest writes items given as JSON texts in one batch at e.Now.
func (e *Env[S]) Ingest(items ...string) *crawlkeeper.IngestResult {
	e.TB.Helper()
	b := &crawlkeeper.IngestBatch{Now: e.Now}
	for _, js := range items {
		b.Items = append(b.Items, e.Prepare(js))
	}
	res, err := e.Store.Ingest(context.Background(), b)
	if err != nil {
		e.TB.Fatalf("ingest: %v", err)
	}
	if len(res.Outcomes) != len(items) || len(res.IDs) != len(items) {
		e.TB.Fatalf("ingest returned %d outcomes and %d ids for %d items", len(res.Outcomes), len(res.IDs), len(items))
	}
	return res
}

// MustGet returns the record with id or fails.
func (e *Env[S]) MustGet(id int64) *crawlkeeper.Record {
	e.TB.Helper()
	r, err := e.Store.Get(context.Background(), id)
	if err != nil {
		e.TB.Fatalf("get %d: %v", id, err)
	}
	return r
}

// MustCheck fails the test when the store's invariants do not hold.
func (e *Env[S]) MustCheck() {
	e.TB.Helper()
	rep, err := e.Store.Check(context.Background())
	if err != nil {
		e.TB.Fatalf("check: %v", err)
	}
	if !rep.OK || len(rep.Violations) != 0 {
		e.TB.Fatalf("check found violations: %+v", rep.Violations)
	}
}

// ok fails the test when err is set.
func ok(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("unexpected error: %v", err)
	}
}

func item(title, url string, extra ...string) string {
	m := map[string]any{"title": title, "url": url}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func testIngest(t *testing.T, open RecordOpener) {
	t.Run("NewThenRecrawl", func(t *testing.T) {
		e := NewEnv(t, open)
		res := e.Ingest(item("Job A", "https://Example.com/a#top", "body", "one"), item("Job B", "https://example.com/b"))
		if got := res.Outcomes; got[0] != crawlkeeper.OutcomeInserted || got[1] != crawlkeeper.OutcomeInserted {
			t.Fatalf("outcomes = %v, want inserted twice", got)
		}
		if res.IDs[0] == res.IDs[1] || res.IDs[0] <= 0 || res.IDs[1] <= 0 {
			t.Fatalf("ids = %v, want two distinct positive ids", res.IDs)
		}
		if len(res.Touched) != 2 {
			t.Fatalf("touched = %v, want both records", res.Touched)
		}
		a := e.MustGet(res.IDs[0])
		if a.URL != "https://example.com/a" || a.Title != "Job A" || a.Version != 1 {
			t.Fatalf("record = %+v", a)
		}
		if !a.CrawledAt.Equal(T0) || !a.LastUpdatedAt.Equal(T0) || a.Archived() {
			t.Fatalf("times: crawled %v updated %v archived %v", a.CrawledAt, a.LastUpdatedAt, a.ArchivedAt)
		}
		var body map[string]any
		if err := json.Unmarshal(a.Item, &body); err != nil || body["body"] != "one" {
			t.Fatalf("item = %s (%v)", a.Item, err)
		}

		// The same item again, with white space and URL noise, a day later.
		e.Now = T0.Add(24 * time.Hour)
		res2 := e.Ingest(item("  Job   A ", "HTTPS://example.com:443/a", "body", "one"))
		if res2.Outcomes[0] != crawlkeeper.OutcomeUnchanged || res2.IDs[0] != a.ID {
			t.Fatalf("recrawl: outcome %v id %d, want unchanged %d", res2.Outcomes[0], res2.IDs[0], a.ID)
		}
		if len(res2.Touched) != 0 {
			t.Fatalf("an unchanged recrawl must not be handed to processing: %v", res2.Touched)
		}
		a2 := e.MustGet(a.ID)
		if !a2.CrawledAt.Equal(T0) || !a2.LastUpdatedAt.Equal(e.Now) || a2.Version != 1 || !a2.LastChangedAt.Equal(T0) {
			t.Fatalf("after recrawl: %+v", a2)
		}
		e.MustCheck()
	})

	t.Run("ChangeKeepsHistory", func(t *testing.T) {
		e := NewEnv(t, open)
		id := e.Ingest(item("Job", "https://x.test/1", "salary", "100")).IDs[0]
		e.Now = T0.Add(time.Hour)
		res := e.Ingest(item("Job", "https://x.test/1", "salary", "120"))
		if res.Outcomes[0] != crawlkeeper.OutcomeChanged || res.IDs[0] != id {
			t.Fatalf("outcome %v id %d", res.Outcomes[0], res.IDs[0])
		}
		if len(res.Touched) != 1 || res.Touched[0] != (crawlkeeper.RecordRef{ID: id, Version: 2}) {
			t.Fatalf("touched = %v", res.Touched)
		}
		e.Now = T0.Add(2 * time.Hour)
		e.Ingest(item("Job", "https://x.test/1", "salary", "130"))
		r := e.MustGet(id)
		if r.Version != 3 || !r.CrawledAt.Equal(T0) || !r.LastChangedAt.Equal(e.Now) {
			t.Fatalf("record after two changes: %+v", r)
		}
		hist, err := e.Store.History(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 2 || hist[0].Version != 1 || hist[1].Version != 2 {
			t.Fatalf("history versions = %+v", hist)
		}
		var old map[string]any
		json.Unmarshal(hist[0].Item, &old)
		if old["salary"] != "100" || !hist[0].ValidFrom.Equal(T0) || !hist[0].ValidTo.Equal(T0.Add(time.Hour)) {
			t.Fatalf("history[0] = %s from %v to %v", hist[0].Item, hist[0].ValidFrom, hist[0].ValidTo)
		}
		if !hist[1].ValidFrom.Equal(hist[0].ValidTo) {
			t.Fatalf("history ranges are not contiguous: %v then %v", hist[0].ValidTo, hist[1].ValidFrom)
		}
		e.MustCheck()
	})

	t.Run("VolatileFieldsAreNotChanges", func(t *testing.T) {
		e := NewEnv(t, open)
		id := e.Ingest(item("Job", "https://x.test/v", "scraped_at", "2025-01-01")).IDs[0]
		e.Now = T0.Add(time.Minute)
		res := e.Ingest(item("Job", "https://x.test/v", "scraped_at", "2025-01-02"))
		if res.Outcomes[0] != crawlkeeper.OutcomeUnchanged {
			t.Fatalf("a changed volatile field gave %v, want unchanged", res.Outcomes[0])
		}
		if r := e.MustGet(id); r.Version != 1 {
			t.Fatalf("version = %d", r.Version)
		}
	})

	t.Run("LastUpdatedNeverMovesBack", func(t *testing.T) {
		e := NewEnv(t, open)
		e.Now = T0.Add(48 * time.Hour)
		id := e.Ingest(item("Job", "https://x.test/t")).IDs[0]
		e.Now = T0
		e.Ingest(item("Job", "https://x.test/t", "note", "late delivery"))
		r := e.MustGet(id)
		if !r.LastUpdatedAt.Equal(T0.Add(48*time.Hour)) || r.CrawledAt.After(r.LastUpdatedAt) {
			t.Fatalf("last_updated_at moved back: %+v", r)
		}
		e.MustCheck()
	})

	t.Run("SameKeyTwiceInOneBatch", func(t *testing.T) {
		e := NewEnv(t, open)
		res := e.Ingest(item("Dup", "https://x.test/d", "v", "1"), item("Dup", "https://x.test/d", "v", "2"), item("Dup", "https://x.test/d", "v", "2"))
		want := []crawlkeeper.Outcome{crawlkeeper.OutcomeInserted, crawlkeeper.OutcomeChanged, crawlkeeper.OutcomeUnchanged}
		for i, o := range res.Outcomes {
			if o != want[i] {
				t.Fatalf("outcomes = %v, want %v", res.Outcomes, want)
			}
		}
		if res.IDs[0] != res.IDs[1] || res.IDs[1] != res.IDs[2] {
			t.Fatalf("ids = %v, want one record", res.IDs)
		}
		if r := e.MustGet(res.IDs[0]); r.Version != 2 {
			t.Fatalf("version = %d, want 2", r.Version)
		}
		e.MustCheck()
	})

	t.Run("CrawledAtFromMetadata", func(t *testing.T) {
		e := NewEnv(t, open)
		res := e.Ingest(`{"title":"Old","url":"https://x.test/o","_crawled_at":"2025-02-01T08:00:00Z"}`,
			`{"title":"Future","url":"https://x.test/f","_crawled_at":"2030-01-01T00:00:00Z"}`)
		if r := e.MustGet(res.IDs[0]); !r.CrawledAt.Equal(time.Date(2025, 2, 1, 8, 0, 0, 0, time.UTC)) || !r.LastUpdatedAt.Equal(T0) {
			t.Fatalf("crawled_at from metadata: %+v", r)
		}
		if r := e.MustGet(res.IDs[1]); !r.CrawledAt.Equal(T0) {
			t.Fatalf("a crawled_at in the future must be clamped to now, got %v", r.CrawledAt)
		}
		e.MustCheck()
	})

	t.Run("HistoryLimit", func(t *testing.T) {
		e := NewEnv(t, open)
		var id int64
		for i := 0; i < 6; i++ {
			b := &crawlkeeper.IngestBatch{Now: e.Now, HistoryLimit: func(string) int { return 3 }}
			b.Items = []*crawlkeeper.Prepared{e.Prepare(item("Lim", "https://x.test/l", "n", fmt.Sprint(i)))}
			res, err := e.Store.Ingest(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			id = res.IDs[0]
			e.Now = e.Now.Add(time.Minute)
		}
		hist, err := e.Store.History(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var vs []int64
		for _, h := range hist {
			vs = append(vs, h.Version)
		}
		if fmt.Sprint(vs) != "[3 4 5]" {
			t.Fatalf("kept versions %v, want [3 4 5]", vs)
		}
		e.MustCheck()
	})

	t.Run("FallbackKey", func(t *testing.T) {
		e := NewEnv(t, open)
		res := e.Ingest(`{"name":"no title","price":"3","fetched_at":"a"}`, `{"name":"no title","price":"3","fetched_at":"b"}`, `{"name":"no title","price":"4"}`)
		if res.IDs[0] != res.IDs[1] || res.IDs[0] == res.IDs[2] {
			t.Fatalf("fallback keys: ids %v, want the first two equal and the third new", res.IDs)
		}
		if r := e.MustGet(res.IDs[0]); len(r.KeyParts) != 1 {
			t.Fatalf("key_parts = %v", r.KeyParts)
		}
	})

	t.Run("EmptyBatch", func(t *testing.T) {
		e := NewEnv(t, open)
		res, err := e.Store.Ingest(context.Background(), &crawlkeeper.IngestBatch{Now: T0})
		if err != nil || len(res.Outcomes) != 0 {
			t.Fatalf("empty batch: %v %v", res, err)
		}
	})

	t.Run("IDsIncrease", func(t *testing.T) {
		e := NewEnv(t, open)
		var last int64
		for i := 0; i < 3; i++ {
			res := e.Ingest(item(fmt.Sprint("T", i), "https://x.test/i", "n", "1"), item(fmt.Sprint("U", i), "https://x.test/i"))
			for _, id := range res.IDs {
				if id <= last {
					t.Fatalf("id %d after %d: ids must increase", id, last)
				}
				last = id
			}
		}
	})
}

func testGet(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	res := e.Ingest(item("G", "https://x.test/g"))
	r := e.MustGet(res.IDs[0])
	byKey, err := e.Store.GetByKey(context.Background(), r.Key)
	if err != nil || byKey.ID != r.ID {
		t.Fatalf("get by key: %v %v", byKey, err)
	}
	for name, f := range map[string]func() error{
		"Get":      func() error { _, err := e.Store.Get(context.Background(), 999999); return err },
		"GetByKey": func() error { _, err := e.Store.GetByKey(context.Background(), "nope"); return err },
		"History":  func() error { _, err := e.Store.History(context.Background(), 999999); return err },
	} {
		if err := f(); crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
			t.Errorf("%s of a missing record: %v, want code %s", name, err, crawlkeeper.ENOTFOUND)
		}
	}
	hist, err := e.Store.History(context.Background(), r.ID)
	if err != nil || len(hist) != 0 {
		t.Fatalf("history of an unchanged record: %v %v", hist, err)
	}
}

func testList(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	var all []int64
	for i := 0; i < 25; i++ {
		e.Now = T0.Add(time.Duration(i%7) * time.Minute)
		src := "alpha"
		if i%3 == 0 {
			src = "beta"
		}
		res := e.Ingest(fmt.Sprintf(`{"title":"Item %d %s","url":"https://x.test/%d","_source":%q}`, i, map[bool]string{true: "needle", false: "hay"}[i%5 == 0], i, src))
		all = append(all, res.IDs[0])
	}
	ctx := context.Background()
	collect := func(q crawlkeeper.RecordQuery) []*crawlkeeper.Record {
		t.Helper()
		var out []*crawlkeeper.Record
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("pagination does not end")
			}
			p, err := e.Store.List(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p.Records...)
			if p.Next == "" {
				return out
			}
			q.Cursor = p.Next
		}
	}
	t.Run("ByID", func(t *testing.T) {
		got := collect(crawlkeeper.RecordQuery{Limit: 4})
		if len(got) != len(all) {
			t.Fatalf("listed %d, want %d", len(got), len(all))
		}
		for i := range got {
			if got[i].ID != all[i] {
				t.Fatalf("position %d: id %d, want %d", i, got[i].ID, all[i])
			}
		}
	})
	t.Run("Newest", func(t *testing.T) {
		got := collect(crawlkeeper.RecordQuery{Limit: 3, Order: crawlkeeper.OrderNewest})
		if len(got) != len(all) {
			t.Fatalf("listed %d, want %d", len(got), len(all))
		}
		ok := sort.SliceIsSorted(got, func(i, j int) bool {
			a, b := got[i], got[j]
			if !a.LastUpdatedAt.Equal(b.LastUpdatedAt) {
				return a.LastUpdatedAt.After(b.LastUpdatedAt)
			}
			return a.ID > b.ID
		})
		if !ok {
			t.Fatal("newest-first listing is out of order")
		}
		seen := map[int64]bool{}
		for _, r := range got {
			if seen[r.ID] {
				t.Fatalf("record %d listed twice across pages", r.ID)
			}
			seen[r.ID] = true
		}
	})
	t.Run("Filters", func(t *testing.T) {
		beta := collect(crawlkeeper.RecordQuery{Source: "beta", Limit: 2})
		if len(beta) != 9 {
			t.Fatalf("source filter: %d records, want 9", len(beta))
		}
		for _, r := range beta {
			if r.Source != "beta" {
				t.Fatalf("source filter returned %q", r.Source)
			}
		}
		needles := collect(crawlkeeper.RecordQuery{Q: "NEEDLE"})
		if len(needles) != 5 {
			t.Fatalf("title search: %d records, want 5", len(needles))
		}
		since := collect(crawlkeeper.RecordQuery{Since: T0.Add(5 * time.Minute)})
		for _, r := range since {
			if r.LastUpdatedAt.Before(T0.Add(5 * time.Minute)) {
				t.Fatalf("since filter returned %v", r.LastUpdatedAt)
			}
		}
		if len(since) != 6 {
			t.Fatalf("since filter: %d records, want 6", len(since))
		}
		if got := collect(crawlkeeper.RecordQuery{Q: `%_\`}); len(got) != 0 {
			t.Fatalf("wildcards in q must be literal, got %d records", len(got))
		}
		arch := collect(crawlkeeper.RecordQuery{Archived: true})
		if len(arch) != 0 {
			t.Fatalf("archive listing: %d records, want 0", len(arch))
		}
	})
	t.Run("BadCursor", func(t *testing.T) {
		_, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Cursor: "!!"})
		if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
			t.Fatalf("bad cursor: %v, want %s", err, crawlkeeper.EINVALID)
		}
	})
}

func testStats(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	e.Ingest(`{"title":"a","url":"https://s.test/a","_source":"one","deadline":"not a date"}`,
		`{"title":"b","url":"https://s.test/b","_source":"one"}`,
		`{"title":"c","url":"https://s.test/c","_source":"two"}`)
	e.Now = T0.Add(time.Hour)
	e.Ingest(`{"title":"c","url":"https://s.test/c","_source":"two","n":1}`)
	st, err := e.Store.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Active != 3 || st.Archived != 0 || st.History != 1 || st.DateErrors != 1 {
		t.Fatalf("stats = %+v", st)
	}
	if st.Sources["one"] == nil || st.Sources["one"].Active != 2 || st.Sources["two"].Active != 1 || st.Sources["one"].ActiveDateErrors != 1 {
		t.Fatalf("per-source stats = %+v", st.Sources)
	}
}

func testCheck(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	e.MustCheck()
	e.Ingest(item("c1", "https://c.test/1"), item("c2", "https://c.test/2"))
	e.Now = e.Now.Add(time.Hour)
	e.Ingest(item("c1", "https://c.test/1", "x", "changed"))
	e.MustCheck()
}

// testConcurrent runs overlapping ingests at once: no key may end up twice
// and the invariants must hold.
func testConcurrent(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	const writers, perWriter = 4, 30
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(item(fmt.Sprint("K", i%10), "https://k.test/", "w", fmt.Sprint(w))), 1, crawlkeeper.Meta{}, T0)
				if err != nil {
					errs <- err
					return
				}
				if _, err := e.Store.Ingest(context.Background(), &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: T0.Add(time.Duration(i) * time.Second)}); err != nil {
					if crawlkeeper.ErrorCode(err) == crawlkeeper.ECONFLICT {
						i-- // a lost race is retried, as the ingester does
						continue
					}
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	p, err := e.Store.List(context.Background(), crawlkeeper.RecordQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Records) != 10 {
		t.Fatalf("%d records after concurrent ingest of 10 keys", len(p.Records))
	}
	e.MustCheck()
}
