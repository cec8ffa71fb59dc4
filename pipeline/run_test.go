package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
	"github.com/crawlkeeper/crawlkeeper/memqueue"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// drive moves the fake clock from waiter to waiter, never past limit,
// until cond holds. The engine's goroutines move on their own between
// waits, so cond is checked again whenever the waiters change and every
// few milliseconds.
func drive(t *testing.T, fake *clock.Fake, limit time.Time, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		changed := fake.Changed()
		next, ok := fake.Next()
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached; fake clock at %v, next wait at %v (%v), limit %v", fake.Now(), next, ok, limit)
		}
		// Waits past the limit stay pending: the condition must hold
		// without them (the engine may still be finishing real work).
		if ok && !next.After(limit) {
			fake.Set(next)
			continue
		}
		select {
		case <-changed:
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func checkpoint(t *testing.T, st pipeline.Store) *pipeline.Checkpoint {
	t.Helper()
	cp, err := pipeline.LoadCheckpoint(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// TestRunPacesPassesOverThePeriod runs the continuous pipeline on a fake
// clock: a pass is spread over most of the period, the next begins one
// period after the previous one began and reaches records added since,
// and real time processes new records in between.
func TestRunPacesPassesOverThePeriod(t *testing.T) {
	st := MustOpenStore(t)
	ingest(t, st, 0, 1000, 1000)
	fake := clock.NewFake(t0)
	q := memqueue.New(0)
	c := newCounter("count")
	// drive jumps the clock to the earliest wait while other goroutines
	// may still be working. The lease renewer waits LeaseTTL/3 whatever
	// the pass is doing, so with a short lease each renewal moved the
	// clock on while the pass was still reading its checkpoint on a busy
	// machine: the pass began minutes late, its paced reads fell past the
	// drive's limit, and the test timed out. With a lease that needs no
	// renewal within the test, only the engine's own waits move the clock
	// (TestRunWaitsForTheScanLease covers the lease).
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c}, Queue: q, Clock: fake,
		Period: time.Hour, Batch: 100, Readers: 2, Workers: 2, Owner: "a", LeaseTTL: 24 * time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()

	drive(t, fake, t0.Add(time.Hour), func() bool {
		cp := checkpoint(t, st)
		return cp != nil && cp.Pass == 1 && cp.FinishedAt != nil
	})
	cp1 := checkpoint(t, st)
	took := cp1.FinishedAt.Sub(cp1.StartedAt)
	if took < 30*time.Minute || took > time.Hour {
		t.Fatalf("pass 1 took %v of a 1h period: want it spread over most of the period, and finished within it", took)
	}
	if len(c.snapshot()) != 1000 {
		t.Fatalf("pass 1 processed %d records", len(c.snapshot()))
	}

	// New records are processed in real time, before the next pass.
	more := ingest(t, st, 5000, 20, 20, crawlkeeper.PublishTouched(q))
	// Real time does not wait on the clock: the fake clock stays still.
	for deadline := time.Now().Add(30 * time.Second); ; {
		calls, n := c.snapshot(), 0
		for _, id := range more {
			n += calls[id]
		}
		if n == len(more) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("real time processed %d of %d new records", n, len(more))
		}
		<-time.After(2 * time.Millisecond)
	}
	if cp := checkpoint(t, st); cp.Pass != 1 {
		t.Fatal("the new records waited for the next pass")
	}

	drive(t, fake, t0.Add(3*time.Hour), func() bool {
		cp := checkpoint(t, st)
		return cp.Pass == 2 && cp.FinishedAt != nil
	})
	cp2 := checkpoint(t, st)
	// Pass 2 begins one period after pass 1 began: the scheduler's wait
	// is the only one pending between passes.
	if d := cp2.StartedAt.Sub(cp1.StartedAt); d != time.Hour {
		t.Fatalf("pass 2 began at %v, want one period after pass 1 began (%v)", cp2.StartedAt, cp1.StartedAt.Add(time.Hour))
	}
	if cp2.End != more[19] || c.snapshot()[more[19]] != 2 {
		t.Fatalf("pass 2 ends at id %d (want %d) and processed the new record %d times (want 2)", cp2.End, more[19], c.snapshot()[more[19]])
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

// TestRunWaitsForTheScanLease shows that a process does not scan while
// another holds the lease, and takes over once the holder stops renewing
// it.
func TestRunWaitsForTheScanLease(t *testing.T) {
	st := MustOpenStore(t)
	ingest(t, st, 0, 50, 50)
	if ok, err := st.AcquireLease(context.Background(), pipeline.ScanLease, "someone-else", 2*time.Minute, t0); !ok || err != nil {
		t.Fatalf("lease: %v %v", ok, err)
	}
	fake := clock.NewFake(t0)
	c := newCounter("count")
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c}, Clock: fake, Period: time.Hour, Owner: "b"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	// Until the lease expires, the engine only waits.
	drive(t, fake, t0.Add(2*time.Minute), func() bool { return fake.Now().Equal(t0.Add(time.Minute)) })
	if cp := checkpoint(t, st); cp != nil || len(c.snapshot()) != 0 {
		t.Fatalf("scanned while another process held the lease: %+v", cp)
	}
	drive(t, fake, t0.Add(time.Hour), func() bool {
		cp := checkpoint(t, st)
		return cp != nil && cp.FinishedAt != nil
	})
	if len(c.snapshot()) != 50 {
		t.Fatalf("after taking the lease over: %d records processed", len(c.snapshot()))
	}
	cancel()
	<-done
	// A stopped engine gives the lease up at once.
	if ok, _ := st.AcquireLease(context.Background(), pipeline.ScanLease, "someone-else", time.Minute, fake.Now()); !ok {
		t.Fatal("the lease was not released when Run stopped")
	}
}
