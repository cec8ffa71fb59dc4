package monitortest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
)

// StoreOpener prepares an empty database for one subtest and returns a
// function that opens another store handle on it, with connections of its
// own, as another process would. The opener closes the handles when the
// subtest ends.
type StoreOpener func(tb testing.TB) func() crawlkeeper.Store

// RunPersister is the conformance suite of crawlkeeper.MonitorPersister:
// every store that implements it runs the monitor suite (Run) over the
// embedded monitor kept in it, and the tests of what the persister
// promises: large bodies round-trip, the log stays dense while several
// handles append (so catching up by sequence number skips nothing), the
// marks of an ingest commit with its records (stores that implement
// crawlkeeper.TxMarkStore) or right after them, and handles that ingest
// and read at once all end with every mark counted once.
func RunPersister(t *testing.T, open StoreOpener) {
	monitors := func(compactEvery int) Opener {
		return func(tb testing.TB) func(crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
			handle := open(tb)
			return func(opts crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
				return mustMonitor(tb, handle(), opts, compactEvery)
			}
		}
	}
	t.Run("Monitor", func(t *testing.T) { Run(t, monitors(0)) })
	// Folding after every second entry exercises snapshots, the kept log
	// tail and reloads of handles that lag behind a fold.
	t.Run("MonitorCompactOften", func(t *testing.T) { Run(t, monitors(2)) })
	t.Run("LargeBodies", func(t *testing.T) { testLargeBodies(t, open) })
	t.Run("DenseLog", func(t *testing.T) { testDenseLog(t, open) })
	t.Run("IngestMarks", func(t *testing.T) { testIngestMarks(t, open) })
	t.Run("IngestFailureReports", func(t *testing.T) { testIngestReports(t, open) })
	t.Run("ConcurrentIngest", func(t *testing.T) { testConcurrentIngest(t, open) })
}

func persister(tb testing.TB, s crawlkeeper.Store) crawlkeeper.MonitorPersister {
	tb.Helper()
	p, ok := s.(crawlkeeper.MonitorPersister)
	if !ok {
		tb.Fatalf("%T does not implement crawlkeeper.MonitorPersister", s)
	}
	return p
}

// mustMonitor opens the embedded monitor in s and connects it to the
// store's ingest, as backends.OpenMonitor does.
func mustMonitor(tb testing.TB, s crawlkeeper.Store, opts crawlkeeper.MonitorOptions, compactEvery int) *roaringmon.Monitor {
	tb.Helper()
	m, err := roaringmon.Open(context.Background(), persister(tb, s), opts)
	if err != nil {
		tb.Fatal(err)
	}
	m.CompactEvery = compactEvery
	if ms, ok := s.(crawlkeeper.TxMarkStore); ok {
		ms.SetTxMarker(m)
	}
	return m
}

// ingester writes through s with the monitor wired as the command line
// does: marks in the ingest transaction when the store commits them
// there, after the commit otherwise.
func ingester(s crawlkeeper.Store, m crawlkeeper.Monitor) *crawlkeeper.Ingester {
	_, inTx := s.(crawlkeeper.TxMarkStore)
	return &crawlkeeper.Ingester{Store: s, MarksInStore: inTx, Monitor: m, Now: func() time.Time { return T0 }}
}

// testLargeBodies writes a snapshot part of 18 MB, over 16 MB (the default
// max_allowed_packet of MariaDB and MongoDB's document limit) and a log
// entry of 9 MB (over the 8 MB chunks the MySQL store splits rows into),
// and reads them back.
func testLargeBodies(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	handle := open(t)
	p := persister(t, handle())
	rnd := rand.New(rand.NewSource(1))
	part := make([]byte, 18<<20)
	rnd.Read(part)
	entry := make([]byte, 9<<20)
	rnd.Read(entry)
	var seq int64
	err := p.UpdateMonitor(ctx, func(tx crawlkeeper.MonitorTx) error {
		var err error
		if seq, err = tx.AppendLog(entry); err != nil {
			return err
		}
		if err := tx.PutPart("r/big", part); err != nil {
			return err
		}
		if err := tx.PutPart("r/small", []byte("x")); err != nil {
			return err
		}
		return tx.FoldLog(seq, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another handle reads what the first wrote.
	err = persister(t, handle()).ViewMonitor(ctx, func(v crawlkeeper.MonitorView) error {
		snap, err := v.SnapshotSeq()
		if err != nil {
			return err
		}
		if snap != seq {
			return fmt.Errorf("snapshot sequence %d, want %d", snap, seq)
		}
		got := map[string][]byte{}
		if err := v.Parts(func(name string, body []byte) error {
			got[name] = bytes.Clone(body)
			return nil
		}); err != nil {
			return err
		}
		if len(got) != 2 || !bytes.Equal(got["r/big"], part) || string(got["r/small"]) != "x" {
			return fmt.Errorf("parts read back: %d parts, r/big %d bytes (equal: %v), r/small %q", len(got), len(got["r/big"]), bytes.Equal(got["r/big"], part), got["r/small"])
		}
		n := 0
		if err := v.LogSince(0, func(s int64, body []byte) error {
			n++
			if s != seq || !bytes.Equal(body, entry) {
				return fmt.Errorf("log entry %d of %d bytes, want %d of %d bytes", s, len(body), seq, len(entry))
			}
			return nil
		}); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%d log entries, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testDenseLog appends from several goroutines on two handles while a
// reader on each handle catches up by sequence number, as the monitor
// does: every entry a reader sees must be the one right after the last it
// saw. On a server where concurrent transactions commit out of sequence
// order, a reader would see a later entry before an earlier one commits,
// and a monitor catching up from "seq > last" would skip the earlier one.
func testDenseLog(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	handle := open(t)
	ps := []crawlkeeper.MonitorPersister{persister(t, handle()), persister(t, handle())}
	const writers, per = 6, 15
	seqs := make(chan int64, writers*per)
	var writes []func() error
	for w := 0; w < writers; w++ {
		writes = append(writes, func() error {
			for i := 0; i < per; i++ {
				err := ps[w%len(ps)].UpdateMonitor(ctx, func(tx crawlkeeper.MonitorTx) error {
					s, err := tx.AppendLog([]byte(fmt.Sprintf("entry %d/%d", w, i)))
					if err == nil {
						seqs <- s
					}
					return err
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	seen := make([]int64, len(ps))
	catchUp := func(r int) error {
		return ps[r].ViewMonitor(ctx, func(v crawlkeeper.MonitorView) error {
			return v.LogSince(seen[r], func(s int64, _ []byte) error {
				if s != seen[r]+1 {
					return fmt.Errorf("reader %d saw entry %d right after %d: an entry below it was not committed yet, or never will be", r, s, seen[r])
				}
				seen[r] = s
				return nil
			})
		})
	}
	runWithReaders(t, writes, []func() error{func() error { return catchUp(0) }, func() error { return catchUp(1) }})
	close(seqs)
	got := map[int64]bool{}
	var hi int64
	for s := range seqs {
		if got[s] {
			t.Fatalf("sequence number %d handed out twice", s)
		}
		got[s] = true
		hi = max(hi, s)
	}
	if hi != writers*per {
		t.Fatalf("highest sequence number %d after %d appends: the log has gaps", hi, writers*per)
	}
	for r := range ps {
		if err := catchUp(r); err != nil {
			t.Fatal(err)
		}
		if seen[r] != hi {
			t.Fatalf("reader %d caught up to %d of %d", r, seen[r], hi)
		}
	}
}

// failingMarker writes the marks through the real monitor, then fails, so
// the ingest transaction that carries them rolls back.
type failingMarker struct{ m crawlkeeper.TxMarker }

func (f failingMarker) MarkTx(ctx context.Context, tx crawlkeeper.MonitorTx, marks []crawlkeeper.Mark) (func(), error) {
	if _, err := f.m.MarkTx(ctx, tx, marks); err != nil {
		return nil, err
	}
	return nil, errors.New("injected failure after the marks were written")
}

func itemsFor(targets ...string) ([]map[string]any, []crawlkeeper.Meta) {
	items := make([]map[string]any, len(targets))
	metas := make([]crawlkeeper.Meta, len(targets))
	for i, tg := range targets {
		items[i] = map[string]any{"title": fmt.Sprintf("item %d of %s", i, tg), "url": fmt.Sprintf("https://%s/%d", tg, i)}
		metas[i] = crawlkeeper.Meta{Target: tg, Round: "1"}
	}
	return items, metas
}

// testIngestMarks ingests items with round marks: the marks are counted
// when Ingest returns. On a store that commits them with the records, a
// transaction that fails after the marks were written keeps neither.
func testIngestMarks(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	s := open(t)()
	m := mustMonitor(t, s, crawlkeeper.MonitorOptions{}, 0)
	defer m.Close()
	g := ingester(s, m)
	items, metas := itemsFor("x.example", "y.example", "y.example")
	sum, err := g.IngestItems(ctx, items, metas)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Inserted != 3 || sum.Marked != 2 {
		t.Fatalf("summary = %+v", sum)
	}
	st, err := m.Status(ctx, "1")
	if err != nil || st.Done != 2 {
		t.Fatalf("status = %+v, %v", st, err)
	}
	ms, ok := s.(crawlkeeper.TxMarkStore)
	if !ok {
		return
	}

	ms.SetTxMarker(failingMarker{m})
	items, metas = itemsFor("z.example")
	if _, err := g.IngestItems(ctx, items, metas); err == nil {
		t.Fatal("ingest succeeded through a failing marker")
	}
	if stats, err := s.Stats(ctx); err != nil || stats.Active != 3 {
		t.Fatalf("records after the failed batch: %+v, %v (want the 3 earlier ones)", stats, err)
	}
	st, _ = m.Status(ctx, "1")
	if st.Done != 2 {
		t.Fatalf("done after the failed batch = %d, want 2", st.Done)
	}
	if _, err := m.Target(ctx, "z.example"); crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
		t.Fatalf("the failed batch's target is in the dictionary: %v", err)
	}
	// The monitor still writes: the dictionary stayed dense.
	if _, err := m.Mark(ctx, []crawlkeeper.Mark{{Round: "1", Target: "w.example", Kind: crawlkeeper.MarkDone, At: T0}}); err != nil {
		t.Fatal(err)
	}
	if ts, err := m.Target(ctx, "w.example"); err != nil || ts.ID != 2 {
		t.Fatalf("w.example = %+v, %v (want id 2)", ts, err)
	}
}

// testIngestReports ingests items that report failures (_error): an
// item with fields is stored and marks its target failed with the
// reason; one with only metadata is a report, marked and not stored, also
// in a batch of reports only.
func testIngestReports(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	s := open(t)()
	m := mustMonitor(t, s, crawlkeeper.MonitorOptions{}, 0)
	defer m.Close()
	g := ingester(s, m)
	items := []map[string]any{
		{"title": "ok", "url": "https://a.example/1"},
		{"title": "partial", "url": "https://b.example/1"},
		{},
	}
	metas := []crawlkeeper.Meta{
		{Target: "a.example", Round: "1"},
		{Target: "b.example", Round: "1", Error: "HTTP 500 on page 2"},
		{Target: "c.example", Round: "1", Error: "timeout after 30s"},
	}
	sum, err := g.IngestItems(ctx, items, metas)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Inserted != 2 || sum.Reports != 1 || sum.Marked != 3 || sum.Rejected != 0 {
		t.Fatalf("summary = %+v", sum)
	}
	sum, err = g.IngestItems(ctx, []map[string]any{{}, {}}, []crawlkeeper.Meta{
		{Target: "d.example", Round: "1", Error: "DNS"},
		{Target: "c.example", Round: "1", Error: "timeout after 60s"},
	})
	if err != nil || sum.Reports != 2 || sum.Marked != 2 || sum.Inserted != 0 {
		t.Fatalf("reports only: %+v %v", sum, err)
	}
	if stats, err := s.Stats(ctx); err != nil || stats.Active != 2 {
		t.Fatalf("stored %+v, %v; want the 2 items with fields", stats, err)
	}
	p, err := m.Failed(ctx, crawlkeeper.FailedQuery{Round: "1"})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "failed", p.Targets, []crawlkeeper.FailedTarget{
		{Target: "b.example", Reason: "HTTP 500 on page 2"},
		{Target: "c.example", Reason: "timeout after 60s"},
		{Target: "d.example", Reason: "DNS"},
	})
	st, err := m.Status(ctx, "1")
	if err != nil || st.Done != 1 || st.Failed != 3 {
		t.Fatalf("status = %+v %v", st, err)
	}
}

// testConcurrentIngest ingests items with round marks through two store
// handles at once, each with its own monitor (one folding its log often),
// while readers on both poll the round: a reader never sees the count go
// down, and at the end every handle, and one opened afterwards, counts
// every mark exactly once.
func testConcurrentIngest(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	handle := open(t)
	var ms []crawlkeeper.Monitor
	var gs []*crawlkeeper.Ingester
	for i := 0; i < 2; i++ {
		s := handle()
		m := mustMonitor(t, s, crawlkeeper.MonitorOptions{}, []int{3, 0}[i])
		t.Cleanup(func() { m.Close() })
		ms = append(ms, m)
		gs = append(gs, ingester(s, m))
	}
	const writers, batches, per = 4, 5, 4
	var writes []func() error
	for w := 0; w < writers; w++ {
		writes = append(writes, func() error {
			for b := 0; b < batches; b++ {
				var targets []string
				for i := 0; i < per; i++ {
					targets = append(targets, fmt.Sprintf("w%d-%d-%d.example", w, b, i))
				}
				items, metas := itemsFor(targets...)
				if _, err := gs[w%len(gs)].IngestItems(ctx, items, metas); err != nil {
					return err
				}
			}
			return nil
		})
	}
	var reads []func() error
	for r := range ms {
		var last int64
		reads = append(reads, func() error {
			st, err := ms[r].Status(ctx, "1")
			if crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTFOUND {
				return nil
			}
			if err != nil {
				return err
			}
			if st.Done < last {
				return fmt.Errorf("reader %d: done went from %d down to %d", r, last, st.Done)
			}
			last = st.Done
			return nil
		})
	}
	runWithReaders(t, writes, reads)
	const total = writers * batches * per
	late := mustMonitor(t, handle(), crawlkeeper.MonitorOptions{}, 0)
	defer late.Close()
	for i, m := range append(ms, late) {
		st, err := m.Status(ctx, "1")
		if err != nil {
			t.Fatal(err)
		}
		if st.Done != total || st.Remaining != 0 {
			t.Fatalf("handle %d counts %d done of %d marks", i, st.Done, total)
		}
	}
}

// runWithReaders runs every writer to its end while each reader is called
// over and over, and fails the test with the first error of any.
func runWithReaders(t *testing.T, writers, readers []func() error) {
	t.Helper()
	errs := make(chan error, len(writers)+len(readers))
	var wg, rg sync.WaitGroup
	for _, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w(); err != nil {
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	for _, r := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := r(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
