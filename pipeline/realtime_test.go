package pipeline_test

import (
	"context"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
	"github.com/crawlkeeper/crawlkeeper/memqueue"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// TestDroppedNotificationsAreCaughtByOnePass loses 10% of the
// notifications on purpose: real time processes the rest, and one pass
// processes every record, each exactly once.
func TestDroppedNotificationsAreCaughtByOnePass(t *testing.T) {
	st := MustOpenStore(t)
	q := memqueue.New(0)
	rng := rand.New(rand.NewSource(7))
	var mu sync.Mutex
	lost := map[int64]bool{}
	q.Drop = func(refs []crawlkeeper.RecordRef) bool {
		mu.Lock()
		defer mu.Unlock()
		if rng.Intn(10) != 0 {
			return false
		}
		for _, r := range refs {
			lost[r.ID] = true
		}
		return true
	}
	c := newCounter("count")
	fake := clock.NewFake(t0.Add(time.Hour))
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{c}, Queue: q, Workers: 2, Batch: 200, Clock: fake}
	if err := e.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	rt := make(chan error, 1)
	go func() { rt <- e.RunRealtime(context.Background()) }()
	// 400 notifications of 10 records each.
	ids := ingest(t, st, 0, 4000, 10, crawlkeeper.PublishTouched(q))
	q.Close()
	if err := <-rt; err != nil {
		t.Fatal(err)
	}
	s := q.Stats()
	if s.Dropped == 0 || s.Published+s.Dropped != 4000 || int64(len(lost)) != s.Dropped {
		t.Fatalf("queue stats %+v, %d lost", s, len(lost))
	}
	t.Logf("dropped %d of 4000 notifications' records (%.1f%%)", s.Dropped, 100*float64(s.Dropped)/4000)
	before := c.snapshot()
	for _, id := range ids {
		if lost[id] != (before[id] == 0) {
			t.Fatalf("record %d: lost %v, processed %d times in real time", id, lost[id], before[id])
		}
	}
	f, _ := pipeline.Freshness(context.Background(), st, e.Chain(), t0)
	if f.NeverProcessed != s.Dropped {
		t.Fatalf("never processed = %d, want the %d dropped", f.NeverProcessed, s.Dropped)
	}

	c.reset()
	fake.Advance(time.Minute)
	rep, err := e.RunPass(context.Background())
	if err != nil || rep.Processed != 4000 {
		t.Fatalf("pass = %+v %v", rep, err)
	}
	calls := c.snapshot()
	for _, id := range ids {
		if calls[id] != 1 {
			t.Fatalf("record %d processed %d times by the pass, want once", id, calls[id])
		}
	}
	f, _ = pipeline.Freshness(context.Background(), st, e.Chain(), t0.Add(time.Hour+time.Second))
	if f.NeverProcessed != 0 || f.Due != 0 {
		t.Fatalf("after one pass: %+v", f)
	}
}

// TestRealtimeLatency measures the time from a batch's commit to its
// records' processed_at on the embedded store, with the real clock. It
// reports the percentiles; speed is asserted by the benchmark, not here.
func TestRealtimeLatency(t *testing.T) {
	longtest.Skip(t, "measures latency over a few thousand records")
	if testing.Short() {
		t.Skip("measures latency over a few thousand records")
	}
	st := MustOpenStore(t)
	q := memqueue.New(0)
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{newCounter("count")}, Queue: q}
	ctx := context.Background()
	if err := e.Init(ctx); err != nil {
		t.Fatal(err)
	}
	rt := make(chan error, 1)
	go func() { rt <- e.RunRealtime(ctx) }()
	committed := map[int64]time.Time{}
	var mu sync.Mutex
	record := func(_ context.Context, _ []*crawlkeeper.Prepared, res *crawlkeeper.IngestResult) {
		now := time.Now()
		mu.Lock()
		for _, r := range res.Touched {
			committed[r.ID] = now
		}
		mu.Unlock()
	}
	// The commit time is taken before publishing, so it includes the
	// hand-over.
	for i := 0; i < 40; i++ {
		ingest(t, st, i*100, 100, 100, record, crawlkeeper.PublishTouched(q))
	}
	q.Close()
	if err := <-rt; err != nil {
		t.Fatal(err)
	}
	var lat []time.Duration
	for _, r := range allRecords(t, st) {
		if r.ProcessedAt == nil {
			t.Fatalf("record %d was not processed in real time", r.ID)
		}
		lat = append(lat, r.ProcessedAt.Sub(committed[r.ID]))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	t.Logf("commit to processed_at over %d records: p50 %v, p99 %v, max %v", len(lat), p(0.5), p(0.99), lat[len(lat)-1])
}
