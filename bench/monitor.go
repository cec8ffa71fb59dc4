package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// MonitorOpener opens an empty monitor for a measurement; close removes it.
type MonitorOpener func(ctx context.Context, name string) (crawlkeeper.Monitor, func(), error)

// MarkBaseline is monitor_mark's baseline: the libraries a monitor is
// built on doing its marking by hand (package internal/rawbench).
type MarkBaseline interface {
	// Queue gives names their ids. Not timed.
	Queue(ctx context.Context, names []string) error
	// Mark marks a batch of names done and persists it.
	Mark(ctx context.Context, names []string) error
	Close()
}

// MonitorSetup is what the monitor measurements run on.
type MonitorSetup struct {
	Open MonitorOpener
	// Baseline opens monitor_mark's baseline (nil: the row has none).
	Baseline func(ctx context.Context) (MarkBaseline, error)
	// Embedded is true for the embedded monitor, whose round size has a
	// target; Redis's is reported.
	Embedded bool
}

// Monitor measures marking speed (monitor_mark, against the libraries by
// hand) and the size of a realistic merged round of 400,000 targets
// (monitor_bytes_400k, against the reference design's 0.1 MB).
func Monitor(m MonitorSetup) Measurement {
	return Measurement{
		Names: []string{"monitor_mark", "monitor_bytes_400k"},
		Run: func(ctx context.Context, env *Env) ([]Result, error) {
			return runMonitor(ctx, env, m)
		},
	}
}

const monitorTargets = 400_000

func targetNames() []string {
	names := make([]string, monitorTargets)
	for i := range names {
		names[i] = fmt.Sprintf("company %06d", i)
	}
	return names
}

func runMonitor(ctx context.Context, env *Env, m MonitorSetup) ([]Result, error) {
	opts := &env.Options
	var results []Result
	names := targetNames()
	if opts.want("monitor_mark") {
		r, err := runMark(ctx, opts, m, names)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if opts.want("monitor_bytes_400k") {
		r, err := runRoundBytes(ctx, opts, m, names)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// runMark marks every target done in crawler-sized batches spread over a
// round's buckets, through the monitor and through the baseline, batch by
// batch in turn.
func runMark(ctx context.Context, opts *Options, m MonitorSetup, names []string) (Result, error) {
	mon, closeMon, err := m.Open(ctx, "mark")
	if err != nil {
		return Result{}, err
	}
	defer closeMon()
	if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: Now}); err != nil {
		return Result{}, err
	}
	var base MarkBaseline
	if m.Baseline != nil {
		if base, err = m.Baseline(ctx); err != nil {
			return Result{}, err
		}
		defer base.Close()
		if err := base.Queue(ctx, names); err != nil {
			return Result{}, err
		}
	}
	const batch = 10_000
	var t timer
	for i := 0; i < len(names); i += batch {
		opts.progress("monitor_mark", i, len(names))
		part := names[i:min(i+batch, len(names))]
		marks := make([]crawlkeeper.Mark, 0, len(part))
		at := Now.Add(time.Duration(i/batch) * 10 * time.Minute)
		for _, n := range part {
			marks = append(marks, crawlkeeper.Mark{Round: "1", Target: n, Kind: crawlkeeper.MarkDone, At: at})
		}
		if err := t.timeA(func() error { _, err := mon.Mark(ctx, marks); return err }); err != nil {
			return Result{}, err
		}
		if base != nil {
			if err := t.timeB(func() error { return base.Mark(ctx, part) }); err != nil {
				return Result{}, fmt.Errorf("monitor_mark baseline: %w", err)
			}
		}
	}
	r := ratioResult("monitor_mark", "marks/s", rate(len(names), t.a), rate(len(names), t.b), len(names), 0.5)
	if base == nil {
		r = noTarget(r, "no baseline for this monitor")
	}
	return r, nil
}

// runRoundBytes builds a realistic round: every target queued, 97% done
// and 2% failed in random order across 144 buckets of 10 minutes (one
// day), 1% still pending, the buckets merged; and reports its size.
func runRoundBytes(ctx context.Context, opts *Options, m MonitorSetup, names []string) (Result, error) {
	mon, closeMon, err := m.Open(ctx, "bytes")
	if err != nil {
		return Result{}, err
	}
	defer closeMon()
	if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: Now}); err != nil {
		return Result{}, err
	}
	order := rand.New(rand.NewPCG(20, 400)).Perm(len(names))
	done, failed := len(names)*97/100, len(names)*2/100
	marked := order[:done+failed]
	per := (len(marked) + 143) / 144
	for b := 0; b < 144; b++ {
		opts.progress("monitor_bytes_400k", b, 144)
		lo, hi := min(b*per, len(marked)), min((b+1)*per, len(marked))
		marks := make([]crawlkeeper.Mark, 0, hi-lo)
		for k := lo; k < hi; k++ {
			kind := crawlkeeper.MarkDone
			if k >= done {
				kind = crawlkeeper.MarkFailed
			}
			marks = append(marks, crawlkeeper.Mark{Round: "1", Target: names[marked[k]], Kind: kind, At: Now.Add(time.Duration(b) * 10 * time.Minute)})
		}
		if _, err := mon.Mark(ctx, marks); err != nil {
			return Result{}, err
		}
	}
	if _, err := mon.MergeBuckets(ctx, Now.Add(25*time.Hour)); err != nil {
		return Result{}, err
	}
	st, err := mon.Status(ctx, "1")
	if err != nil {
		return Result{}, err
	}
	if st.Done != int64(done) {
		return Result{}, fmt.Errorf("monitor_bytes_400k: %d targets done, want %d", st.Done, done)
	}
	r := Result{Name: "monitor_bytes_400k", Unit: "bytes", Value: float64(st.Bytes), Baseline: 102400, N: len(names), Target: "value/baseline <= 0.625"}
	r.Ratio = r.Value / r.Baseline
	r.Met = r.Ratio <= 0.625
	if !m.Embedded {
		r = noTarget(r, "reported for Redis (target is the embedded monitor's)")
	}
	return r, nil
}
