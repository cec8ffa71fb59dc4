package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// MonitorOpener opens an empty monitor for a measurement; close removes it.
type MonitorOpener func(ctx context.Context, name string) (crawlkeeper.Monitor, func(), error)

// Monitor measures marking speed (monitor_mark, against ingest_new) and
// the size of a fully done, merged round of 400,000 targets
// (monitor_bytes_400k, against the reference design's 0.1 MB).
func Monitor(open MonitorOpener) Measurement {
	return Measurement{
		Names: []string{"monitor_mark", "monitor_bytes_400k"},
		Run: func(ctx context.Context, env *Env) ([]Result, error) {
			return runMonitor(ctx, env, open)
		},
	}
}

func runMonitor(ctx context.Context, env *Env, open MonitorOpener) ([]Result, error) {
	opts := &env.Options
	var results []Result
	const targets = 400_000
	names := make([]string, targets)
	for i := range names {
		names[i] = fmt.Sprintf("company %06d", i)
	}
	if opts.want("monitor_mark") {
		mon, closeMon, err := open(ctx, "mark")
		if err != nil {
			return nil, err
		}
		defer closeMon()
		if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: Now}); err != nil {
			return nil, err
		}
		// Marks arrive in crawler-sized batches spread over a round's
		// buckets.
		const batch = 10_000
		start := time.Now()
		for i := 0; i < targets; i += batch {
			opts.progress("monitor_mark", i, targets)
			marks := make([]crawlkeeper.Mark, 0, batch)
			at := Now.Add(time.Duration(i/batch) * 10 * time.Minute)
			for _, n := range names[i:min(i+batch, targets)] {
				marks = append(marks, crawlkeeper.Mark{Round: "1", Target: n, Kind: crawlkeeper.MarkDone, At: at})
			}
			if _, err := mon.Mark(ctx, marks); err != nil {
				return nil, err
			}
		}
		value := rate(targets, time.Since(start))
		r := Result{Name: "monitor_mark", Unit: "marks/s", Value: value, Baseline: env.IngestNew, N: targets, Target: "value/baseline >= 10"}
		if r.Baseline > 0 {
			r.Ratio = r.Value / r.Baseline
			r.Met = r.Ratio >= 10
		} else {
			r.Target = "value/baseline >= 10 (run with ingest_new for the baseline)"
		}
		results = append(results, r)
	}
	if opts.want("monitor_bytes_400k") {
		mon, closeMon, err := open(ctx, "bytes")
		if err != nil {
			return nil, err
		}
		defer closeMon()
		if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: Now}); err != nil {
			return nil, err
		}
		// A round fully done across 144 buckets of 10 minutes (one day).
		per := targets / 144
		for b := 0; b < 144; b++ {
			opts.progress("monitor_bytes_400k", b, 144)
			lo, hi := b*per, (b+1)*per
			if b == 143 {
				hi = targets
			}
			marks := make([]crawlkeeper.Mark, 0, hi-lo)
			for _, n := range names[lo:hi] {
				marks = append(marks, crawlkeeper.Mark{Round: "1", Target: n, Kind: crawlkeeper.MarkDone, At: Now.Add(time.Duration(b) * 10 * time.Minute)})
			}
			if _, err := mon.Mark(ctx, marks); err != nil {
				return nil, err
			}
		}
		if _, err := mon.MergeBuckets(ctx, Now.Add(25*time.Hour)); err != nil {
			return nil, err
		}
		st, err := mon.Status(ctx, "1")
		if err != nil {
			return nil, err
		}
		if st.Done != targets {
			return nil, fmt.Errorf("monitor_bytes_400k: %d of %d targets done", st.Done, targets)
		}
		r := Result{Name: "monitor_bytes_400k", Unit: "bytes", Value: float64(st.Bytes), Baseline: 102400, N: targets, Target: "value/baseline <= 0.625"}
		r.Ratio = r.Value / r.Baseline
		r.Met = r.Ratio <= 0.625
		results = append(results, r)
	}
	return results, nil
}
