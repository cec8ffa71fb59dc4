package crawlkeeper_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

var t0 = time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)

// harness is a store with an ingester and an archiver sharing a clock.
type harness struct {
	t     *testing.T
	store *sqlite.Store
	cfg   *crawlkeeper.Config
	now   time.Time
	mu    sync.Mutex
	dates crawlkeeper.DateParser
}

func newHarness(t *testing.T, yaml string) *harness {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &harness{t: t, store: s, cfg: cfg, now: t0, dates: crawlkeeper.MachineDates{}}
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

func (h *harness) set(t time.Time) {
	h.mu.Lock()
	h.now = t
	h.mu.Unlock()
}

func (h *harness) ingest(lines ...string) *crawlkeeper.IngestSummary {
	h.t.Helper()
	g := &crawlkeeper.Ingester{Store: h.store, Config: h.cfg, Dates: h.dates, Now: h.clock, Rules: crawlkeeper.NewRules(h.cfg)}
	sum, err := g.Ingest(context.Background(), strings.NewReader(strings.Join(lines, "\n")), crawlkeeper.Meta{})
	if err != nil {
		h.t.Fatal(err)
	}
	return sum
}

func (h *harness) archiver() *crawlkeeper.Archiver {
	return &crawlkeeper.Archiver{Store: h.store, Config: h.cfg, Dates: h.dates, Now: h.clock}
}

func (h *harness) run(opts crawlkeeper.ArchiveOptions) *crawlkeeper.ArchiveReport {
	h.t.Helper()
	rep, err := h.archiver().Run(context.Background(), opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return rep
}

func (h *harness) check() {
	h.t.Helper()
	rep, err := h.store.Check(context.Background())
	if err != nil || !rep.OK {
		h.t.Fatalf("check: %+v %v", rep, err)
	}
}

func (h *harness) count(archived bool) int {
	h.t.Helper()
	p, err := h.store.List(context.Background(), crawlkeeper.RecordQuery{Archived: archived, Limit: 10000})
	if err != nil {
		h.t.Fatal(err)
	}
	return len(p.Records)
}

// list returns the active or archived records in id order.
func (h *harness) list(archived bool) []*crawlkeeper.Record {
	h.t.Helper()
	p, err := h.store.List(context.Background(), crawlkeeper.RecordQuery{Archived: archived, Order: crawlkeeper.OrderID, Limit: 10000})
	if err != nil {
		h.t.Fatal(err)
	}
	return p.Records
}

func TestArchivePassByReasonAndSource(t *testing.T) {
	h := newHarness(t, `
defaults:
  max_age: 30d
sources:
  fast:
    stale_after: 2d
    max_age: off
`)
	day := 24 * time.Hour
	h.ingest(
		`{"title":"old","url":"https://a.test/old","_source":"slow"}`,
		`{"title":"deadline","url":"https://a.test/dl","_source":"slow","deadline":"2025-09-05"}`,
		`{"title":"fresh","url":"https://a.test/fresh","_source":"slow"}`,
		`{"title":"listed","url":"https://f.test/listed","_source":"fast"}`,
		`{"title":"gone","url":"https://f.test/gone","_source":"fast"}`,
	)
	h.set(t0.Add(25 * day))
	h.ingest(`{"title":"fresh","url":"https://a.test/fresh","_source":"slow","v":2}`, `{"title":"listed","url":"https://f.test/listed","_source":"fast"}`)
	// "fresh" was first seen at t0 too: only its content changed, so the
	// age rule still applies to it at t0+31d.
	h.set(t0.Add(26 * day))

	dry := h.run(crawlkeeper.ArchiveOptions{DryRun: true})
	if dry.Archived != 2 || dry.ByReason[crawlkeeper.ReasonEvent] != 1 || dry.ByReason[crawlkeeper.ReasonStale] != 1 || len(dry.Samples) != 2 {
		t.Fatalf("dry run = %+v", dry)
	}
	if h.count(true) != 0 {
		t.Fatal("a dry run moved records")
	}

	rep := h.run(crawlkeeper.ArchiveOptions{})
	if rep.Archived != 2 || rep.ByReason[crawlkeeper.ReasonEvent] != 1 || rep.ByReason[crawlkeeper.ReasonStale] != 1 {
		t.Fatalf("pass = %+v", rep)
	}
	h.set(t0.Add(31 * day))
	rep = h.run(crawlkeeper.ArchiveOptions{})
	// old and fresh are 31 days old; fast has no max_age, but listed was
	// last delivered 6 days ago and fast archives after 2 days unlisted.
	if rep.Archived != 3 || rep.ByReason[crawlkeeper.ReasonAge] != 2 || rep.ByReason[crawlkeeper.ReasonStale] != 1 {
		t.Fatalf("age pass = %+v", rep)
	}
	if h.count(false) != 0 || h.count(true) != 5 {
		t.Fatalf("active %d archived %d", h.count(false), h.count(true))
	}
	again := h.run(crawlkeeper.ArchiveOptions{})
	if again.Archived != 0 {
		t.Fatalf("a second pass moved %d", again.Archived)
	}
	runs, err := h.store.Journal(context.Background(), crawlkeeper.JournalArchiveRun, 10)
	if err != nil || len(runs) != 3 {
		t.Fatalf("journal has %d runs, want 3 (dry runs are not recorded): %v", len(runs), err)
	}
	h.check()

	only := h.run(crawlkeeper.ArchiveOptions{Source: "fast", DryRun: true})
	if only.Archived != 0 {
		t.Fatalf("--source fast dry run = %+v", only)
	}
}

func TestRecrawlRevivesOrRefreshes(t *testing.T) {
	h := newHarness(t, "defaults:\n  stale_after: 3d\n  max_age: off\n")
	day := 24 * time.Hour
	h.ingest(`{"title":"job","url":"https://r.test/1","deadline":"2025-09-02"}`, `{"title":"ad","url":"https://r.test/2"}`)
	h.set(t0.Add(5 * day))
	if rep := h.run(crawlkeeper.ArchiveOptions{}); rep.Archived != 2 {
		t.Fatalf("pass = %+v", rep)
	}
	// Both come back: the job's deadline has passed, so it stays archived
	// (refreshed); the ad is live again and is revived.
	sum := h.ingest(`{"title":"job","url":"https://r.test/1","deadline":"2025-09-02"}`, `{"title":"ad","url":"https://r.test/2"}`)
	if sum.Refreshed != 1 || sum.Revived != 1 {
		t.Fatalf("recrawl = %+v", sum)
	}
	if h.count(false) != 1 || h.count(true) != 1 {
		t.Fatalf("active %d archived %d", h.count(false), h.count(true))
	}
	h.check()
}

// parserFix reads DD/MM/YYYY, which MachineDates cannot: it stands for a
// parser fix shipped after records were stored.
type parserFix struct{}

func (parserFix) ParseDate(s string, o crawlkeeper.DateOptions) (crawlkeeper.ParsedDate, error) {
	if t, err := time.ParseInLocation("02/01/2006", s, o.Location); err == nil {
		return crawlkeeper.ParsedDate{Time: t, DateOnly: true}, nil
	}
	return crawlkeeper.MachineDates{}.ParseDate(s, o)
}

func TestForceAppliesParserFix(t *testing.T) {
	h := newHarness(t, "defaults:\n  max_age: off\n")
	h.ingest(`{"title":"a","url":"https://p.test/a","deadline":"15/09/2025"}`, `{"title":"b","url":"https://p.test/b","deadline":"15/10/2025"}`, `{"title":"c","url":"https://p.test/c"}`)
	h.set(time.Date(2025, 9, 20, 0, 0, 0, 0, time.UTC))
	rep := h.run(crawlkeeper.ArchiveOptions{})
	if rep.Archived != 0 || rep.DateErrors != 2 {
		t.Fatalf("before the fix: %+v", rep)
	}
	h.dates = parserFix{}
	// Without --force nothing changes: the stored event_at is what counts.
	if rep := h.run(crawlkeeper.ArchiveOptions{}); rep.Archived != 0 {
		t.Fatalf("without --force: %+v", rep)
	}
	rep = h.run(crawlkeeper.ArchiveOptions{Force: true})
	if rep.Reparsed != 3 || rep.ReparseChanged != 2 || rep.DateErrors != 0 || rep.Archived != 1 || rep.ByReason[crawlkeeper.ReasonEvent] != 1 {
		t.Fatalf("with --force: %+v", rep)
	}
	b, err := h.store.GetByKey(context.Background(), mustKey(t, `{"title":"b","url":"https://p.test/b"}`))
	if err != nil || b.EventAt == nil || !b.EventAt.Equal(time.Date(2025, 10, 16, 0, 0, 0, 0, time.UTC)) || len(b.DateErrors) != 0 {
		t.Fatalf("b after force = %+v %v", b, err)
	}
	h.check()
}

func mustKey(t *testing.T, js string) string {
	t.Helper()
	p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(js), 1, crawlkeeper.Meta{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return p.Key
}

// Ingest keeps re-crawling records while the archiver moves them: every
// key must end up exactly once, and a record re-crawled after selection is
// left active for the next pass.
func TestArchiveDuringConcurrentIngest(t *testing.T) {
	h := newHarness(t, "defaults:\n  max_age: 10d\n")
	var lines []string
	for i := 0; i < 400; i++ {
		lines = append(lines, fmt.Sprintf(`{"title":"t%d","url":"https://c.test/%d"}`, i, i))
	}
	h.ingest(lines...)
	h.set(t0.Add(11 * 24 * time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	recrawls := 0
	go func() {
		defer wg.Done()
		g := &crawlkeeper.Ingester{Store: h.store, Config: h.cfg, Now: h.clock, Rules: crawlkeeper.NewRules(h.cfg), BatchSize: 7}
		for i := 0; ctx.Err() == nil && i < 4000; i += 13 {
			if _, err := g.Ingest(ctx, strings.NewReader(lines[i%len(lines)]+"\n"+lines[(i+200)%len(lines)]), crawlkeeper.Meta{}); err != nil && !errors.Is(err, context.Canceled) {
				t.Error(err)
				return
			}
			recrawls++
		}
	}()
	total := 0
	for pass := 0; pass < 5; pass++ {
		rep, err := (&crawlkeeper.Archiver{Store: h.store, Config: h.cfg, Now: h.clock}).Run(context.Background(), crawlkeeper.ArchiveOptions{Batch: 16})
		if err != nil {
			t.Fatal(err)
		}
		total += rep.Archived
	}
	cancel()
	wg.Wait()
	h.check()
	if h.count(false)+h.count(true) != 400 {
		t.Fatalf("active %d + archived %d != 400", h.count(false), h.count(true))
	}
	if total == 0 || recrawls == 0 {
		t.Fatalf("archived %d, recrawled %d batches: the test did not exercise both", total, recrawls)
	}
}

// memExport collects purge lines; syncErr fails its Sync, and onSync runs
// at each Sync, between the export of a page and its deletion.
type memExport struct {
	lines   []crawlkeeper.PurgeLine
	synced  int
	syncErr error
	onSync  func()
}

func (m *memExport) Write(v any) error {
	m.lines = append(m.lines, v.(crawlkeeper.PurgeLine))
	return nil
}

func (m *memExport) Sync() error {
	if m.syncErr != nil {
		return m.syncErr
	}
	if m.onSync != nil {
		m.onSync()
	}
	m.synced = len(m.lines)
	return nil
}

func TestPurgeExportsFirst(t *testing.T) {
	h := newHarness(t, "defaults:\n  max_age: 1d\nsources:\n  keep:\n    max_age: 1d\n  short:\n    max_age: 1d\n    purge_after: 7d\n")
	h.ingest(`{"title":"a","url":"https://x.test/a","_source":"short"}`, `{"title":"b","url":"https://x.test/b","_source":"keep"}`)
	h.set(t0.Add(time.Hour))
	h.ingest(`{"title":"a","url":"https://x.test/a","_source":"short","v":2}`)
	h.set(t0.Add(2 * 24 * time.Hour))
	if rep := h.run(crawlkeeper.ArchiveOptions{}); rep.Archived != 2 {
		t.Fatalf("archive = %+v", rep)
	}
	h.set(t0.Add(10 * 24 * time.Hour))
	failing := errors.New("disk full")
	exp := &memExport{syncErr: failing}
	if _, err := h.archiver().Purge(context.Background(), exp); !errors.Is(err, failing) {
		t.Fatalf("purge with a failing export = %v", err)
	}
	if h.count(true) != 2 {
		t.Fatal("records were deleted although the export failed")
	}
	exp = &memExport{}
	rep, err := h.archiver().Purge(context.Background(), exp)
	if err != nil || rep.Purged != 1 || rep.Exported != 1 || rep.BySource["short"] != 1 || rep.Changed != 0 {
		t.Fatalf("purge = %+v %v", rep, err)
	}
	if len(exp.lines) != 1 || exp.synced != 1 || exp.lines[0].Record.Source != "short" || len(exp.lines[0].History) != 1 {
		t.Fatalf("export = %+v", exp.lines)
	}
	if h.count(true) != 1 {
		t.Fatalf("archived left: %d", h.count(true))
	}
	h.check()
}

// A crawl that re-delivers an archived record while its purge export is
// being written refreshes it in the archive: the purge must keep that
// newer version (and its history), not delete what it never exported.
func TestPurgeKeepsRecordsRefreshedAfterExport(t *testing.T) {
	h := newHarness(t, "defaults:\n  max_age: 1d\n  purge_after: 7d\n")
	h.ingest(`{"title":"a","url":"https://x.test/a"}`, `{"title":"b","url":"https://x.test/b"}`)
	h.set(t0.Add(time.Hour))
	h.ingest(`{"title":"a","url":"https://x.test/a","v":2}`)
	h.set(t0.Add(2 * 24 * time.Hour))
	if rep := h.run(crawlkeeper.ArchiveOptions{}); rep.Archived != 2 {
		t.Fatalf("archive = %+v", rep)
	}
	h.set(t0.Add(10 * 24 * time.Hour))
	exp := &memExport{onSync: func() {
		// Still older than max_age, so it is refreshed in the archive.
		if sum := h.ingest(`{"title":"a","url":"https://x.test/a","v":3}`); sum.Refreshed != 1 {
			t.Errorf("re-crawl during the purge = %+v, want a refresh of the archived record", sum)
		}
	}}
	rep, err := h.archiver().Purge(context.Background(), exp)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exported != 2 || rep.Purged != 1 || rep.Changed != 1 {
		t.Fatalf("purge = %+v, want 2 exported, 1 purged, 1 kept as changed", rep)
	}
	if h.count(true) != 1 {
		t.Fatalf("archived left: %d, want the refreshed record", h.count(true))
	}
	exp = &memExport{}
	rep, err = h.archiver().Purge(context.Background(), exp)
	if err != nil || rep.Purged != 1 || rep.Changed != 0 {
		t.Fatalf("second purge = %+v %v", rep, err)
	}
	if len(exp.lines) != 1 || string(exp.lines[0].Record.Item) != `{"title":"a","url":"https://x.test/a","v":3}` || len(exp.lines[0].History) != 2 {
		t.Fatalf("second export = %+v, want version 3 with two versions of history", exp.lines)
	}
	h.check()
}

func TestManualArchiveAndRestore(t *testing.T) {
	h := newHarness(t, "")
	sum := h.ingest(`{"title":"a","url":"https://m.test/a","deadline":"2025-09-03"}`, `{"title":"b","url":"https://m.test/b"}`)
	if sum.Inserted != 2 {
		t.Fatal(sum)
	}
	arch := h.archiver()
	var ids []int64
	for _, r := range h.list(false) {
		ids = append(ids, r.ID)
	}
	rep, err := arch.ArchiveManual(context.Background(), []int64{ids[1], 99})
	if err != nil || rep.Archived != 1 || fmt.Sprint(rep.NotActive) != "[99]" {
		t.Fatalf("manual by id = %+v %v, want one archived and 99 reported as not active", rep, err)
	}
	h.set(t0.Add(time.Hour))
	rep, err = arch.ArchiveOlderThan(context.Background(), "", 30*time.Minute)
	if err != nil || rep.Archived != 1 || rep.ByReason[crawlkeeper.ReasonManual] != 1 {
		t.Fatalf("manual older than = %+v %v", rep, err)
	}
	h.set(t0.Add(5 * 24 * time.Hour))
	res, err := arch.Restore(context.Background(), []int64{ids[0], ids[1], 99})
	if err != nil || len(res.Restored) != 2 || fmt.Sprint(res.NotArchived) != "[99]" {
		t.Fatalf("restore = %+v %v", res, err)
	}
	if len(res.StillDue) != 1 || res.StillDue[0].ID != ids[0] || res.StillDue[0].Reason != crawlkeeper.ReasonEvent {
		t.Fatalf("still due = %+v", res.StillDue)
	}
	h.check()
}

// failingJournal is a store whose journal cannot be written.
type failingJournal struct {
	crawlkeeper.Store
	calls int
}

func (f *failingJournal) AppendJournal(ctx context.Context, kind string, at time.Time, body json.RawMessage) error {
	f.calls++
	return crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "journal: disk full")
}

// A pass whose moves committed but whose journal entry cannot be written
// is reported as such (the moves stand), after retrying: it used to be
// dropped without a word, leaving a pass missing from the run history.
func TestArchiveJournalFailureSurfaces(t *testing.T) {
	h := newHarness(t, "defaults:\n  max_age: 1d\n")
	h.ingest(`{"title":"a","url":"https://j.test/a"}`, `{"title":"b","url":"https://j.test/b"}`)
	h.set(t0.Add(2 * 24 * time.Hour))
	st := &failingJournal{Store: h.store}
	noWait := func(context.Context, time.Duration) error { return nil }
	arch := &crawlkeeper.Archiver{Store: st, Config: h.cfg, Dates: h.dates, Now: h.clock, Retry: &crawlkeeper.Retry{Attempts: 3, Sleep: noWait}}
	rep, err := arch.Run(context.Background(), crawlkeeper.ArchiveOptions{})
	if !errors.Is(err, crawlkeeper.ErrJournal) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("pass with a failing journal: %v, want ErrJournal with the cause", err)
	}
	if rep == nil || rep.Archived != 2 || h.count(true) != 2 {
		t.Fatalf("report %+v, %d archived: the moves must stand and be reported", rep, h.count(true))
	}
	if st.calls != 3 {
		t.Fatalf("journal tried %d times, want 3 (retried)", st.calls)
	}
	if _, err := arch.ArchiveManual(context.Background(), nil); !errors.Is(err, crawlkeeper.ErrJournal) {
		t.Fatalf("manual archive with a failing journal: %v", err)
	}
}
