package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// RunRescan runs the reprocessing pipeline's passes over the store: a pass
// writes back only results that changed, and Freshness, fed the pass
// checkpoints, is right before, during and after passes and after a
// resumed one.
func RunRescan(t *testing.T, open Opener) { testRescan(t, open) }

// writeCounter counts the results handed to WriteProcessed.
type writeCounter struct {
	crawlkeeper.Store
	rows atomic.Int64
}

func (w *writeCounter) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	w.rows.Add(int64(len(ws)))
	return w.Store.WriteProcessed(ctx, ws)
}

// stable is a processor whose result depends on the record's title and on
// a per-record variant the test changes.
type stable struct {
	version int
	mu      sync.Mutex
	variant map[int64]int
}

func (p *stable) Name() string { return "stable" }
func (p *stable) Version() int { return p.version }
func (p *stable) Process(_ context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	derived["stable"] = map[string]any{"title": r.Title, "variant": p.variant[r.ID]}
	return nil
}

func testRescan(t *testing.T, open Opener) {
	ctx := context.Background()
	e := NewEnv(t, open)
	const n = 20
	var items []string
	for i := 0; i < n; i++ {
		items = append(items, item(fmt.Sprint("R", i), fmt.Sprintf("https://rescan.test/%d", i)))
	}
	ids := e.Ingest(items...).IDs
	st := &writeCounter{Store: e.Store}
	proc := &stable{version: 1, variant: map[int64]int{}}
	chain := crawlkeeper.ChainSignature([]crawlkeeper.Processor{proc})
	fake := clock.NewFake(T0)
	const period = time.Hour
	engine := func() *pipeline.Engine {
		return &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{proc}, Clock: fake, Period: period,
			Readers: 1, Workers: 1, Batch: 4}
	}
	pass := func(wantWrites, wantUnchanged int64) *pipeline.PassReport {
		t.Helper()
		before := st.rows.Load()
		rep, err := engine().RunPass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if w := st.rows.Load() - before; w != wantWrites || rep.Unchanged != wantUnchanged || !rep.Finished {
			t.Fatalf("pass %d wrote %d results, %d unchanged (report %+v); want %d written, %d unchanged", rep.Pass, w, rep.Unchanged, rep, wantWrites, wantUnchanged)
		}
		return rep
	}
	// fresh checks Freshness with the pass checkpoints for a due time.
	fresh := func(what string, dueBefore time.Time, due, never int64, oldest time.Time) {
		t.Helper()
		f, err := pipeline.Freshness(ctx, st, chain, dueBefore)
		if err != nil {
			t.Fatal(err)
		}
		okOldest := f.OldestProcessedAt == nil && oldest.IsZero() || f.OldestProcessedAt != nil && f.OldestProcessedAt.Equal(oldest)
		if f.Active != n || f.Due != due || f.NeverProcessed != never || !okOldest {
			t.Fatalf("%s: freshness %+v, oldest %v; want %d active, %d due, %d never, oldest %v", what, f, f.OldestProcessedAt, n, due, never, oldest)
		}
	}
	processedAt := func(id int64) time.Time {
		t.Helper()
		r := e.MustGet(id)
		if r.ProcessedAt == nil {
			t.Fatalf("record %d was never processed", id)
		}
		return *r.ProcessedAt
	}

	fresh("before any pass", T0, n, n, time.Time{})

	// The first pass writes every result.
	t1 := T0.Add(time.Hour)
	fake.Set(t1)
	pass(n, 0)
	fresh("after the first pass", t1, 0, 0, t1)
	fresh("after the first pass, a moment later", t1.Add(time.Microsecond), n, 0, t1)

	// A second pass finds every result unchanged and writes none: the
	// records keep their processed_at, and the pass's checkpoint says
	// when they were processed.
	t2 := t1.Add(2 * time.Hour)
	fake.Set(t2)
	pass(0, n)
	for _, id := range ids {
		if at := processedAt(id); !at.Equal(t1) {
			t.Fatalf("record %d: processed_at %v after a pass with an unchanged result, want %v (no write)", id, at, t1)
		}
	}
	fresh("after an unchanged pass", t2, 0, 0, t2)
	fresh("after an unchanged pass, a moment later", t2.Add(time.Microsecond), n, 0, t2)

	// A pass stopped after its first checkpoint (as a killed process
	// stops): the records below its position were processed at t3, the
	// others by the previous pass at t2.
	t3 := t2.Add(2 * time.Hour)
	fake.Set(t3)
	stopCtx, stop := context.WithCancel(ctx)
	stopped := engine()
	stopped.Progress = func(pipeline.Progress) { stop() }
	if _, err := stopped.RunPass(stopCtx); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped pass returned %v, want context.Canceled", err)
	}
	cp, err := pipeline.LoadCheckpoint(ctx, st)
	if err != nil || cp == nil || cp.FinishedAt != nil || cp.Position() <= 0 || cp.Position() >= cp.End {
		t.Fatalf("checkpoint of the stopped pass = %+v (%v), want one stopped partway", cp, err)
	}
	var below int64
	for _, id := range ids {
		if id <= cp.Position() {
			below++
		}
	}
	fresh("during a pass", t3, n-below, 0, t2)
	fresh("during a pass, at the previous pass", t2, 0, 0, t2)

	// Resumed later, the pass finishes: the records it read before the
	// stop keep t3, the rest were processed at t4.
	t4 := t3.Add(10 * time.Minute)
	fake.Set(t4)
	if rep := pass(0, n-below); !rep.Resumed {
		t.Fatalf("the pass did not resume: %+v", rep)
	}
	fresh("after a resumed pass", t3, 0, 0, t3)
	fresh("after a resumed pass, a moment later", t3.Add(time.Microsecond), below, 0, t3)
	fresh("after a resumed pass, at its resumption", t4.Add(time.Microsecond), n, 0, t3)

	// A result that changes is written, with its processed_at.
	t5 := t4.Add(2 * time.Hour)
	fake.Set(t5)
	proc.mu.Lock()
	proc.variant[ids[3]] = 1
	proc.mu.Unlock()
	pass(1, n-1)
	if at := processedAt(ids[3]); !at.Equal(t5) {
		t.Fatalf("a changed result was written with processed_at %v, want %v", at, t5)
	}
	fresh("after a pass with one change", t5, 0, 0, t5)

	// A new version of a record is due until processed, whatever the
	// passes covered.
	e.Now = t5.Add(time.Minute)
	e.Ingest(item("R2", "https://rescan.test/2", "body", "changed"))
	fresh("after a content change", t5, 1, 0, t5)

	// A record back from the archive, restored or revived by a crawl, is
	// due: a pass may have covered its id while it was archived.
	for _, id := range []int64{ids[5], ids[6]} {
		r := e.MustGet(id)
		if _, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil {
			t.Fatal(err)
		}
	}
	if restored, err := e.Store.Restore(ctx, []int64{ids[5]}); err != nil || len(restored) != 1 {
		t.Fatalf("restore = %v %v", restored, err)
	}
	if res := e.Ingest(items[6]); res.Outcomes[0] != crawlkeeper.OutcomeRevived {
		t.Fatalf("re-crawl of an archived record: %v, want revived", res.Outcomes[0])
	}
	for _, id := range []int64{ids[5], ids[6]} {
		if r := e.MustGet(id); r.ProcessedVersion != 0 || r.ProcessedAt == nil {
			t.Fatalf("record %d back from the archive: processed version %d at %v, want 0 and its old processed_at kept", id, r.ProcessedVersion, r.ProcessedAt)
		}
	}
	// Until then their processed time is their processed_at: t1, from the
	// only pass that wrote them.
	fresh("after a restore and a revival", t5, 3, 0, t1)

	// The next pass writes those three and nothing else.
	t6 := t5.Add(2 * time.Hour)
	fake.Set(t6)
	pass(3, n-3)
	fresh("after processing them", t6, 0, 0, t6)

	// A new processor version makes every record due, and its first
	// pass writes every result.
	proc2 := &stable{version: 2, variant: proc.variant}
	chain2 := crawlkeeper.ChainSignature([]crawlkeeper.Processor{proc2})
	if f, err := pipeline.Freshness(ctx, st, chain2, t6); err != nil || f.Due != n {
		t.Fatalf("freshness for a new chain = %+v %v, want every record due", f, err)
	}
	e.MustCheck()
}
