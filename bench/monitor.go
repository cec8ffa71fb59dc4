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

// monitorResults are the results of Monitor.
var monitorResults = []string{"monitor_mark", "monitor_bytes_400k", "monitor_dict_bytes_400k", "monitor_total_bytes_400k"}

// Monitor measures marking speed (monitor_mark, against the libraries by
// hand), the size of a realistic merged round of 400,000 targets
// (monitor_bytes_400k, against the reference design's 0.1 MB), and what
// the whole monitor takes in its engine for it: the dictionary of the
// 400,000 names (monitor_dict_bytes_400k) and everything
// (monitor_total_bytes_400k), both against the names' own bytes.
func Monitor(m MonitorSetup) Measurement {
	return Measurement{
		Names: monitorResults,
		Run: func(ctx context.Context, env *Env) ([]Result, error) {
			return runMonitor(ctx, env, m)
		},
	}
}

const monitorTargets = 400_000

func runMonitor(ctx context.Context, env *Env, m MonitorSetup) ([]Result, error) {
	opts := &env.Options
	var results []Result
	names := CompanyNames(monitorTargets, 1)
	if opts.want("monitor_mark") {
		r, err := runMark(ctx, opts, m, names)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if opts.want(monitorResults[1:]...) {
		rs, err := runRoundBytes(ctx, opts, m, names)
		if err != nil {
			return nil, err
		}
		results = append(results, rs...)
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
// day), 1% still pending, the buckets merged; and reports its size. The
// dictionary is measured once the names are queued; the whole monitor
// once the next day's round was queued and the buckets merged again, as
// a daily crawl leaves it.
func runRoundBytes(ctx context.Context, opts *Options, m MonitorSetup, names []string) ([]Result, error) {
	mon, closeMon, err := m.Open(ctx, "bytes")
	if err != nil {
		return nil, err
	}
	defer closeMon()
	raw := 0
	for _, n := range names {
		raw += len(n)
	}
	sizer, _ := mon.(crawlkeeper.MonitorSizer)
	sizeResult := func(name string, pick func(*crawlkeeper.MonitorSize) int64, target float64) (Result, error) {
		r := Result{Name: name, Unit: "bytes", Baseline: float64(raw), N: len(names)}
		if sizer == nil {
			return noTarget(r, "this monitor does not report its size"), nil
		}
		sz, err := sizer.MonitorSize(ctx)
		if crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTSUPPORTED {
			return noTarget(r, crawlkeeper.ErrorMessage(err)), nil
		}
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.Value = float64(pick(sz))
		r.Ratio = r.Value / r.Baseline
		if target == 0 {
			return noTarget(r, "reported against the names' own bytes"), nil
		}
		r.Target = fmt.Sprintf("value/baseline <= %g", target)
		r.Met = r.Ratio <= target
		if !m.Embedded {
			r.Target += " and value <= 25 MB"
			r.Met = r.Met && r.Value <= 25<<20
		}
		return r, nil
	}
	var results []Result
	if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: Now}); err != nil {
		return nil, err
	}
	if opts.want("monitor_dict_bytes_400k") {
		r, err := sizeResult("monitor_dict_bytes_400k", func(s *crawlkeeper.MonitorSize) int64 { return s.Dictionary }, 2)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
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
	if st.Done != int64(done) {
		return nil, fmt.Errorf("monitor_bytes_400k: %d targets done, want %d", st.Done, done)
	}
	if opts.want("monitor_bytes_400k") {
		r := Result{Name: "monitor_bytes_400k", Unit: "bytes", Value: float64(st.Bytes), Baseline: 102400, N: len(names), Target: "value/baseline <= 0.625"}
		r.Ratio = r.Value / r.Baseline
		r.Met = r.Ratio <= 0.625
		if !m.Embedded {
			r = noTarget(r, "reported for Redis (target is the embedded monitor's)")
		}
		results = append(results, r)
	}
	if opts.want("monitor_total_bytes_400k") {
		if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "2", Targets: names, At: Now.Add(24 * time.Hour)}); err != nil {
			return nil, err
		}
		if _, err := mon.MergeBuckets(ctx, Now.Add(26*time.Hour)); err != nil {
			return nil, err
		}
		r, err := sizeResult("monitor_total_bytes_400k", func(s *crawlkeeper.MonitorSize) int64 { return s.Total }, 0)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}
