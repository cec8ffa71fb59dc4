package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

func TestPassProcessesEveryRecordOnce(t *testing.T) {
	st := MustOpenStore(t)
	ids := ingest(t, st, 0, 2000, 500)
	// Archive a stretch in the middle: the pass must step over the gap.
	var moves []crawlkeeper.Move
	for _, id := range ids[700:900] {
		r, _ := st.Get(context.Background(), id)
		moves = append(moves, crawlkeeper.Move{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual})
	}
	if _, err := st.Archive(context.Background(), moves, t0); err != nil {
		t.Fatal(err)
	}
	c := newCounter("count")
	fake := clock.NewFake(t0.Add(time.Hour))
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c}, Readers: 3, Workers: 4, Batch: 50, Clock: fake}
	var progress []pipeline.Progress
	e.Progress = func(p pipeline.Progress) { progress = append(progress, p) }
	rep, err := e.RunPass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass != 1 || rep.Processed != 1800 || rep.Skipped != 0 || rep.Failed != 0 || rep.Resumed || !rep.Finished {
		t.Fatalf("report = %+v", rep)
	}
	calls := c.snapshot()
	if len(calls) != 1800 {
		t.Fatalf("%d records processed, want 1800", len(calls))
	}
	for id, n := range calls {
		if n != 1 {
			t.Fatalf("record %d processed %d times in one pass", id, n)
		}
	}
	for _, r := range allRecords(t, st) {
		if r.ProcessedAt == nil || !r.ProcessedAt.Equal(t0.Add(time.Hour)) || r.ProcessedVersion != r.Version || r.ProcessedChain != "count@1" {
			t.Fatalf("record %d: processed_at %v version %d chain %q", r.ID, r.ProcessedAt, r.ProcessedVersion, r.ProcessedChain)
		}
		var d map[string]map[string]any
		if err := json.Unmarshal(r.Derived, &d); err != nil || d["count"]["title"] != r.Title {
			t.Fatalf("record %d derived = %s", r.ID, r.Derived)
		}
	}
	cp, err := pipeline.LoadCheckpoint(context.Background(), st)
	if err != nil || cp.FinishedAt == nil || cp.Position() != ids[len(ids)-1] || cp.End != ids[len(ids)-1] {
		t.Fatalf("checkpoint = %+v %v", cp, err)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i].Position < progress[i-1].Position {
			t.Fatalf("checkpoint moved backwards: %+v then %+v", progress[i-1], progress[i])
		}
	}

	// The next pass is a new one and reaches records added since.
	more := ingest(t, st, 5000, 10, 10)
	c.reset()
	rep, err = e.RunPass(context.Background())
	if err != nil || rep.Pass != 2 || rep.Processed != 1810 {
		t.Fatalf("second pass = %+v %v", rep, err)
	}
	if c.snapshot()[more[9]] != 1 {
		t.Fatal("the second pass missed a record added after the first")
	}
}

// TestPassResumesAfterInterruption stops a pass halfway (as a killed
// process would stop) and shows that a new engine continues from the
// checkpoint, neither repeating the written part nor skipping anything.
func TestPassResumesAfterInterruption(t *testing.T) {
	st := MustOpenStore(t)
	ids := ingest(t, st, 0, 3000, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	first := newCounter("count")
	processed := 0
	first.before = func(context.Context, *crawlkeeper.Record) error {
		first.mu.Lock()
		defer first.mu.Unlock()
		if processed++; processed == 1300 {
			cancel()
		}
		return nil
	}
	e1 := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{first}, Readers: 2, Workers: 2, Batch: 100}
	if _, err := e1.RunPass(ctx); err == nil {
		t.Fatal("the interrupted pass reported success")
	}
	cp, err := pipeline.LoadCheckpoint(context.Background(), st)
	if err != nil || cp.FinishedAt != nil {
		t.Fatalf("checkpoint after the interruption = %+v %v", cp, err)
	}
	pos := cp.Position()
	if pos <= 0 || pos >= ids[len(ids)-1] {
		t.Fatalf("position %d: the interruption did not land inside the pass", pos)
	}
	// Everything the checkpoint claims is written.
	for _, r := range allRecords(t, st) {
		inRange := false
		for _, rg := range cp.Ranges {
			if r.ID > rg.Pos && r.ID <= rg.End {
				inRange = true
			}
		}
		if !inRange && r.ProcessedAt == nil {
			t.Fatalf("record %d is outside the checkpoint's ranges %+v but was never written", r.ID, cp.Ranges)
		}
	}

	second := newCounter("count")
	e2 := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{second}, Readers: 3, Workers: 2, Batch: 100}
	rep, err := e2.RunPass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Resumed || rep.Pass != cp.Pass || rep.From != pos {
		t.Fatalf("second run = %+v, want pass %d resumed from %d", rep, cp.Pass, pos)
	}
	calls := second.snapshot()
	for id := range calls {
		if id <= pos {
			t.Fatalf("record %d below the checkpoint %d was processed again", id, pos)
		}
	}
	done := first.snapshot()
	for _, id := range ids {
		if done[id] == 0 && calls[id] == 0 {
			t.Fatalf("record %d was skipped by both runs", id)
		}
	}
	if rep.Processed >= int64(len(ids)) {
		t.Fatalf("the resumed run processed %d records: it started over", rep.Processed)
	}
}

func TestChangedRecordIsProcessedAgain(t *testing.T) {
	st := MustOpenStore(t)
	ids := ingest(t, st, 0, 10, 10)
	target := ids[4]
	c := newCounter("count")
	changed := false
	c.before = func(ctx context.Context, r *crawlkeeper.Record) error {
		if r.ID == target && !changed {
			changed = true
			// A crawler delivers a new version while the record is being
			// processed.
			p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(`{"title":"record 4","url":"https://p.test/4","body":"new text"}`), 1, crawlkeeper.Meta{Source: "p.test"}, t0)
			if err != nil {
				return err
			}
			_, err = st.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: t0.Add(time.Minute)})
			return err
		}
		return nil
	}
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c}, Workers: 1}
	rep, err := e.RunPass(context.Background())
	if err != nil || rep.Processed != 10 || rep.Skipped != 0 {
		t.Fatalf("pass = %+v %v", rep, err)
	}
	r, _ := st.Get(context.Background(), target)
	if r.Version != 2 || r.ProcessedVersion != 2 || c.snapshot()[target] != 2 {
		t.Fatalf("changed record: version %d processed_version %d calls %d; want the new version processed", r.Version, r.ProcessedVersion, c.snapshot()[target])
	}
}

func TestFailingRecordGoesToDeadLetters(t *testing.T) {
	st := MustOpenStore(t)
	ids := ingest(t, st, 0, 20, 20)
	bad := ids[7]
	f := &failing{bad: map[int64]bool{bad: true}, attempts: map[int64]int{}}
	c := newCounter("count")
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{f, c}, Workers: 2, Clock: clock.NewFake(t0)}
	rep, err := e.RunPass(context.Background())
	if err != nil || rep.Processed != 20 || rep.Failed != 1 {
		t.Fatalf("pass = %+v %v", rep, err)
	}
	if f.tries(bad) != 3 || f.tries(ids[0]) != 1 {
		t.Fatalf("attempts: bad %d, good %d; want 3 and 1", f.tries(bad), f.tries(ids[0]))
	}
	dls, _ := st.DeadLetters(context.Background(), 10)
	if len(dls) != 1 || dls[0].ID != bad || dls[0].Processor != "flaky" || dls[0].Failures != 3 || !strings.Contains(dls[0].Error, "cannot handle") {
		t.Fatalf("dead letters = %+v", dls)
	}
	r, _ := st.Get(context.Background(), bad)
	var d map[string]any
	json.Unmarshal(r.Derived, &d)
	if d["count"] == nil || d["flaky"] != nil || d["errors"].(map[string]any)["flaky"] == nil || r.ProcessedAt == nil {
		t.Fatalf("failed record derived = %s: the other processor's result must be written, the failure noted", r.Derived)
	}

	// The next pass leaves the dead processor alone on that version.
	if _, err := e.RunPass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.tries(bad) != 3 || c.snapshot()[bad] != 2 {
		t.Fatalf("second pass: flaky tried %d times, count ran %d times; want 3 and 2", f.tries(bad), c.snapshot()[bad])
	}

	// A retry runs it again; once the record is fixed it leaves the list.
	f.mu.Lock()
	delete(f.bad, bad)
	f.mu.Unlock()
	out, removed, err := e.RetryDeadLetters(context.Background(), nil)
	if err != nil || out.Processed != 1 || out.Failed != 0 || len(removed) != 1 {
		t.Fatalf("retry = %+v %v %v", out, removed, err)
	}
	if dls, _ := st.DeadLetters(context.Background(), 10); len(dls) != 0 {
		t.Fatalf("dead letters after a successful retry = %+v", dls)
	}
	r, _ = st.Get(context.Background(), bad)
	if !strings.Contains(string(r.Derived), `"flaky":"ok"`) || strings.Contains(string(r.Derived), "errors") {
		t.Fatalf("derived after retry = %s", r.Derived)
	}
}

func TestChainChangeStartsANewPass(t *testing.T) {
	st := MustOpenStore(t)
	ingest(t, st, 0, 300, 300)
	c := newCounter("count")
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c}, Batch: 100}
	if _, err := e.RunPass(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, _ := pipeline.Freshness(context.Background(), st, "count@1", t0)
	if f.Due != 0 {
		t.Fatalf("due after a pass = %d", f.Due)
	}
	c2 := newCounter("count")
	c2.version = 2
	f, _ = pipeline.Freshness(context.Background(), st, crawlkeeper.ChainSignature([]crawlkeeper.Processor{c2}), t0)
	if f.Due != 300 {
		t.Fatalf("a new processor version must make every record due, got %d", f.Due)
	}
	e2 := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c2}, Batch: 100}
	rep, err := e2.RunPass(context.Background())
	if err != nil || rep.Pass != 2 || rep.Processed != 300 {
		t.Fatalf("pass with the new chain = %+v %v", rep, err)
	}
}

// TestPacing runs a pass on a fake clock: reads are spread over 90% of
// the period, and MaxRate caps them when it is the stricter limit.
func TestPacing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxRate float64
		// wantGap is the wait between two batches of 100 records.
		wantGap time.Duration
	}{
		{"period", 0, 90 * time.Second},        // 1000 ids over 900 s
		{"max-rate", 0.5, 200 * time.Second},   // 100 records at 0.5/s
		{"period-wins", 100, 90 * time.Second}, // 1 s per batch is faster than the schedule
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := MustOpenStore(t)
			ingest(t, st, 0, 1000, 1000)
			fake := clock.NewFake(t0)
			c := newCounter("count")
			e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c}, Readers: 1, Workers: 1, Batch: 100,
				Clock: fake, Period: 1000 * time.Second, Pace: true, MaxRate: tc.maxRate}
			done := make(chan error, 1)
			go func() { _, err := e.RunPass(context.Background()); done <- err }()
			var gaps []time.Duration
			for {
				changed := fake.Changed()
				if next, ok := fake.Next(); ok {
					gaps = append(gaps, next.Sub(fake.Now()))
					fake.Set(next)
					continue
				}
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					elapsed := fake.Now().Sub(t0)
					if len(gaps) != 9 {
						t.Fatalf("waited %d times (%v), want 9: one wait between batches", len(gaps), gaps)
					}
					for _, g := range gaps {
						if d := g - tc.wantGap; d < -time.Second || d > time.Second {
							t.Fatalf("gaps %v, want about %v each", gaps, tc.wantGap)
						}
					}
					if tc.maxRate == 0 && elapsed > 900*time.Second {
						t.Fatalf("a paced pass took %v of a 1000 s period, want under 900 s", elapsed)
					}
					if len(c.snapshot()) != 1000 {
						t.Fatalf("%d records processed", len(c.snapshot()))
					}
					return
				case <-changed:
				}
			}
		})
	}
}
