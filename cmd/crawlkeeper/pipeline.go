package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/chain"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// pipelineFlags are the engine knobs that scan (and the other pipeline
// commands) take on the command line; zero means the configuration's
// value, then the default.
type pipelineFlags struct {
	readers, workers, batch int
	period                  string
	maxRate                 float64
	processors              string
}

func (p *pipelineFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&p.readers, "readers", 0, "parallel range `readers` (default: pipeline.readers, 2)")
	fs.IntVar(&p.workers, "workers", 0, "processing `workers` (default: pipeline.workers, the CPUs)")
	fs.IntVar(&p.batch, "batch", 0, "records per read and write (default: pipeline.batch, 500)")
	fs.StringVar(&p.period, "period", "", "deadline of one pass, such as 24h or 7d (default: pipeline.period, 24h)")
	fs.Float64Var(&p.maxRate, "max-rate", 0, "cap on records read per second (default: pipeline.max_rate, no cap)")
	fs.StringVar(&p.processors, "processors", "", "comma-separated processor chain (default: pipeline.processors, dates,fingerprint,stats)")
}

// appClock is the pipeline's clock: the app's (possibly fixed or
// time-lapse) time, and waits that last d of that time.
type appClock struct {
	now func() time.Time
	// speed is how many clock seconds pass per real second (the demo's
	// time-lapse); 0 means 1.
	speed float64
}

func (c appClock) Now() time.Time { return c.now() }

func (c appClock) After(d time.Duration) <-chan time.Time {
	if c.speed > 1 {
		d = time.Duration(float64(d) / c.speed)
	}
	return time.After(d)
}

// chainNames returns the configured processor chain.
func (e *env) chainNames(flagValue string) []string {
	if names := chain.Names(flagValue); len(names) > 0 {
		return names
	}
	if len(e.a.cfg.Pipeline.Processors) > 0 {
		return e.a.cfg.Pipeline.Processors
	}
	return crawlkeeper.DefaultProcessors
}

// buildChain makes the processors named; the returned function releases
// what they hold (exec programs).
func (e *env) buildChain(names []string, workers int) ([]crawlkeeper.Processor, func(), error) {
	return chain.Build(names, chain.Options{Config: e.a.cfg, Dates: e.dates, Now: e.a.now, Workers: workers})
}

// engine returns a pipeline engine on the environment's store with the
// configured chain; flags override the configuration. The returned
// function releases the processors.
func (e *env) engine(f pipelineFlags, logger *slog.Logger) (*pipeline.Engine, func(), error) {
	eng := &pipeline.Engine{Store: e.store, Clock: appClock{now: e.a.now, speed: e.a.speed}, LeaseClock: clock.Real{}, Logger: logger,
		Readers: f.readers, Workers: f.workers, Batch: f.batch, MaxRate: f.maxRate}
	if f.period != "" {
		d, err := crawlkeeper.ParseDuration(f.period)
		if err != nil || d <= 0 {
			return nil, nil, usagef("--period %q: use a duration such as 24h or 7d", f.period)
		}
		eng.Period = d.D()
	}
	if f.readers < 0 || f.workers < 0 || f.batch < 0 || f.maxRate < 0 {
		return nil, nil, usagef("--readers, --workers, --batch and --max-rate must not be negative")
	}
	eng.Apply(e.a.cfg.Pipeline)
	procs, release, err := e.buildChain(e.chainNames(f.processors), eng.Workers)
	if err != nil {
		return nil, nil, err
	}
	eng.Processors = procs
	return eng, release, nil
}

// openQueue opens the configured notification queue and makes the
// environment's ingester publish to it.
func (e *env) openQueue(ctx context.Context) error {
	q, err := backends.OpenQueue(ctx, e.a.queueURL)
	if err != nil {
		return err
	}
	e.queue = q
	return nil
}

// pipelineLoops returns serve's continuous pipeline: real time from the
// queue and the paced rescans.
func (e *env) pipelineLoops(logger *slog.Logger) []func(context.Context) error {
	if e.eng == nil {
		return nil
	}
	return []func(context.Context) error{e.eng.Run}
}
