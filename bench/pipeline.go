package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/memqueue"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/crawlkeeper/crawlkeeper/processors"
)

// Pipeline measures the reprocessing engine: a full rescan pass with a
// no-op processor against the raw keyset read of the same table
// (scan_pass), the same with a processor whose every result changes
// (scan_pass_changed), and the time from an ingest's commit to its records'
// processed_at in real time (realtime_p99).
var Pipeline = Measurement{
	Names: []string{"scan_pass", "scan_pass_changed", "realtime_p99"},
	Run:   runPipeline,
}

func loadRaw(ctx context.Context, opts *Options, raw Raw, n int) error {
	for from := 0; from < n; from += chunk {
		to := min(from+chunk, n)
		opts.progress("scan_pass (load)", from, n)
		recs, err := prepareRecords(opts, from, to, 0, 1)
		if err != nil {
			return err
		}
		for i := 0; i < len(recs); i += crawlkeeper.DefaultBatchSize {
			if err := raw.Insert(ctx, recs[i:min(i+crawlkeeper.DefaultBatchSize, len(recs))]); err != nil {
				return err
			}
		}
	}
	if err := raw.SyncIDs(ctx); err != nil {
		return err
	}
	return raw.Analyze(ctx)
}

func runPipeline(ctx context.Context, env *Env) ([]Result, error) {
	opts := &env.Options
	var results []Result
	if opts.want("scan_pass", "scan_pass_changed") {
		st, closeSt, err := opts.Open(ctx, "scan")
		if err != nil {
			return nil, err
		}
		defer closeSt()
		raw, err := opts.raw(st)
		if err != nil {
			return nil, err
		}
		n := opts.Scale
		if err := loadRaw(ctx, opts, raw, n); err != nil {
			return nil, err
		}
		if opts.want("scan_pass") {
			// A rescan in steady state: every record was processed before
			// and its result does not change. The first pass, which writes
			// every result, is not timed.
			e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{processors.Noop{}}}
			if _, err := e.RunPass(ctx); err != nil {
				return nil, err
			}
			r, err := timePasses(ctx, opts, "scan_pass", e, raw, n)
			if err != nil {
				return nil, err
			}
			results = append(results, ratioResult("scan_pass", "records/s", r.a, r.b, r.n, 0.5))
		}
		if opts.want("scan_pass_changed") {
			// Every result changes, so every pass writes every record.
			e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{&changing{}}}
			r, err := timePasses(ctx, opts, "scan_pass_changed", e, raw, n)
			if err != nil {
				return nil, err
			}
			results = append(results, ratioResult("scan_pass_changed", "records/s", r.a, r.b, r.n, 0.5))
		}
	}
	if opts.want("realtime_p99") {
		r, err := runRealtime(ctx, opts)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// passRates are the records/s of passes (a) and of the raw keyset read
// (b) over n records in all.
type passRates struct {
	a, b float64
	n    int
}

// timePasses times full passes of e against the raw keyset read of the
// same n records, interleaved pass by pass. For scan_pass_changed, whose
// passes write every result back, the baseline writes a result for every
// record too (Raw.ProcessPage).
func timePasses(ctx context.Context, opts *Options, name string, e *pipeline.Engine, raw Raw, n int) (passRates, error) {
	if err := e.Init(ctx); err != nil {
		return passRates{}, err
	}
	const batch = 500
	var t timer
	const rounds = 2
	for i := 0; i < rounds; i++ {
		opts.progress(name, i, rounds)
		if err := t.timeB(func() error {
			after, total := int64(0), 0
			for {
				read := raw.Keyset
				if name == "scan_pass_changed" {
					read = func(ctx context.Context, after int64, limit int) (int, int64, error) {
						return raw.ProcessPage(ctx, after, limit, Now.Add(time.Duration(i+1)*time.Hour))
					}
				}
				k, last, err := read(ctx, after, batch)
				if err != nil {
					return err
				}
				total += k
				if k < batch {
					break
				}
				after = last
			}
			if total != n {
				return fmt.Errorf("%s baseline read %d of %d records", name, total, n)
			}
			return nil
		}); err != nil {
			return passRates{}, err
		}
		if err := t.timeA(func() error {
			rep, err := e.RunPass(ctx)
			if err == nil && rep.Processed != int64(n) {
				err = fmt.Errorf("%s processed %d of %d records", name, rep.Processed, n)
			}
			return err
		}); err != nil {
			return passRates{}, err
		}
	}
	return passRates{a: rate(rounds*n, t.a), b: rate(rounds*n, t.b), n: rounds * n}, nil
}

// changing is a processor whose result differs on every call, so that
// every pass writes every record back.
type changing struct{ calls atomic.Int64 }

func (*changing) Name() string { return "changing" }
func (*changing) Version() int { return 1 }
func (c *changing) Process(_ context.Context, _ *crawlkeeper.Record, derived map[string]any) error {
	derived["changing"] = c.calls.Add(1)
	return nil
}

// runRealtime ingests batches of new items with the engine's real-time
// loop running and measures, per record, the time from the batch's commit
// (taken before the notification is published) to the moment its
// processed_at is written. A first phase ingests as fast as it can to
// find the maximum rate with the loop running; the measured phase ingests
// at half that rate, each batch started at its scheduled time (never
// waiting after a late one), so the queue backs up when processing falls
// behind and nothing in the measured path sleeps.
func runRealtime(ctx context.Context, opts *Options) (Result, error) {
	st, closeSt, err := opts.Open(ctx, "realtime")
	if err != nil {
		return Result{}, err
	}
	defer closeSt()
	q := memqueue.New(0)
	written := &writeClock{Store: st, at: map[int64]time.Time{}}
	e := &pipeline.Engine{Store: written, Processors: []crawlkeeper.Processor{processors.Noop{}}, Queue: q}
	if err := e.Init(ctx); err != nil {
		return Result{}, err
	}
	rt := make(chan error, 1)
	go func() { rt <- e.RunRealtime(ctx) }()
	committed := map[int64]time.Time{}
	var mu sync.Mutex
	measuring := false
	g := &crawlkeeper.Ingester{Store: st, Config: &crawlkeeper.Config{}, Dates: opts.Dates, Now: func() time.Time { return Now }}
	g.AfterCommit = append(g.AfterCommit, func(_ context.Context, _ []*crawlkeeper.Prepared, res *crawlkeeper.IngestResult) {
		now := time.Now()
		mu.Lock()
		if measuring {
			for _, r := range res.Touched {
				committed[r.ID] = now
			}
		}
		mu.Unlock()
	}, crawlkeeper.PublishTouched(q))
	n := min(max(opts.Scale/20, 2000), 20000)
	const batch = 100
	ingest := func(from int) error {
		_, err := g.Ingest(ctx, bytesReader(NDJSON(from, from+batch, 0)), crawlkeeper.Meta{})
		return err
	}
	start := time.Now()
	for from := 0; from < n; from += batch {
		opts.progress("realtime_p99 (max rate)", from, n)
		if err := ingest(from); err != nil {
			return Result{}, err
		}
	}
	maxRate := rate(n, time.Since(start))
	mu.Lock()
	measuring = true
	mu.Unlock()
	// One batch every interval is half the maximum rate.
	interval := time.Duration(float64(time.Second) * batch / (maxRate / 2))
	start = time.Now()
	for k, from := 0, n; from < 2*n; k, from = k+1, from+batch {
		opts.progress("realtime_p99", from-n, n)
		if wait := time.Until(start.Add(time.Duration(k) * interval)); wait > 0 {
			time.Sleep(wait) // pacing the producer, outside the measured path
		}
		if err := ingest(from); err != nil {
			return Result{}, err
		}
	}
	q.Close()
	if err := <-rt; err != nil {
		return Result{}, err
	}
	var lat []time.Duration
	written.mu.Lock()
	for id, c := range committed {
		w, ok := written.at[id]
		if !ok {
			written.mu.Unlock()
			return Result{}, fmt.Errorf("realtime_p99: record %d was not processed in real time", id)
		}
		lat = append(lat, w.Sub(c))
	}
	written.mu.Unlock()
	r := Result{Name: "realtime_p99", Unit: "ms", Value: percentile(lat, 0.99), N: len(lat),
		Target: fmt.Sprintf("value <= 1000 (ingest at %.0f items/s, half the %.0f measured)", maxRate/2, maxRate)}
	r.Met = r.Value <= 1000
	return r, nil
}

// writeClock notes when each record's processing result was committed.
type writeClock struct {
	crawlkeeper.Store
	mu sync.Mutex
	at map[int64]time.Time
}

func (w *writeClock) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	skipped, err := w.Store.WriteProcessed(ctx, ws)
	now := time.Now()
	if err == nil {
		w.mu.Lock()
		for _, p := range ws {
			w.at[p.ID] = now
		}
		w.mu.Unlock()
	}
	return skipped, err
}
