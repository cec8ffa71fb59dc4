package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/internal/demo"
)

func init() {
	register(&command{name: "demo", summary: "run serve with a simulated crawl of several sites in time-lapse", run: runDemo})
}

func runDemo(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("demo", "demo [--addr HOST:PORT] [--speed N] [--past D] [--data DIR]")
	addr := fs.String("addr", "127.0.0.1:8080", "listen `address`")
	speed := fs.Float64("speed", 720, "simulated seconds per real second (720: a day every two minutes)")
	seed := fs.Uint64("seed", 1, "random `seed` of the simulation")
	pastFlag := fs.String("past", "7d", "simulated `duration` replayed before the demo starts, so every page has data at once (0: start empty)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("demo takes no arguments")
	}
	if *speed < 1 || *speed > 100000 {
		return usagef("--speed must be between 1 and 100000")
	}
	pastD, err := crawlkeeper.ParseDuration(*pastFlag)
	if err != nil || pastD < 0 {
		return usagef("--past %q: use a duration such as 7d or 12h, or 0", *pastFlag)
	}
	past := ptr(pastD.D())
	explicitData := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "data" {
			explicitData = true
		}
	})
	// The demo keeps its data apart from real data unless told otherwise.
	if !explicitData {
		dir, err := os.MkdirTemp("", "crawlkeeper-demo-")
		if err != nil {
			return err
		}
		a.data = dir
	}
	if a.configPath == "" && os.Getenv(config.EnvVar) == "" {
		path := filepath.Join(a.data, "demo-config.yaml")
		if err := os.MkdirAll(a.data, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(demo.Config()), 0o644); err != nil {
			return err
		}
		cfg, err := config.Load(path)
		if err != nil {
			return err
		}
		a.cfg = cfg
	}
	// The demo first replays a simulated past, its clock set step by step
	// through it, then goes live in time-lapse from the present: the
	// clock starts at present and runs speed times faster.
	present := a.now()
	var (
		warm      atomic.Int64 // the replay's clock, in Unix nanoseconds
		liveSince atomic.Pointer[time.Time]
	)
	warm.Store(present.Add(-*past).UnixNano())
	clock := func() time.Time {
		if since := liveSince.Load(); since != nil {
			return present.Add(time.Duration(float64(time.Since(*since)) * *speed))
		}
		return time.Unix(0, warm.Load()).UTC()
	}
	a.speed = *speed
	fmt.Fprintf(a.stdout, "demo data in %s; one simulated day passes every %s\n", a.data, (time.Duration(float64(24*time.Hour) / *speed)).Round(time.Second))
	var sim *demo.Sim
	return serve(ctx, a, serveOptions{
		addr:         *addr,
		clock:        clock,
		archiveEvery: 10 * time.Second,
		prepare: func(ctx context.Context, srv *httpapi.Server, env *env, archive *archiveRunner) error {
			if env.mon == nil {
				return fmt.Errorf("demo: the crawl monitor is not available")
			}
			ingest := func(ctx context.Context, items []map[string]any, meta crawlkeeper.Meta) error {
				metas := make([]crawlkeeper.Meta, len(items))
				for i := range metas {
					metas[i] = meta
				}
				// Through the server, so the simulated crawl is counted
				// on /metrics and the overview like one through the API.
				_, err := srv.IngestItems(ctx, items, metas)
				return err
			}
			sim = demo.New(ingest, env.mon, present.Add(-*past), *seed)
			sim.Incidents(present)
			if *past <= 0 {
				liveSince.Store(ptr(time.Now()))
				return nil
			}
			// The past goes through the paths serve uses: the ingester,
			// the archive loop's pass under its lease, the alert engine.
			quiet := slog.New(slog.DiscardHandler)
			alertEng := env.alertEngine(quiet)
			began := time.Now()
			fmt.Fprintf(a.stdout, "simulating the past %s first, so every page has data at once...\n", crawlkeeper.Duration(*past))
			err := sim.Replay(ctx, present.Add(-*past), present, 5*time.Minute, func(t time.Time) { warm.Store(t.UnixNano()) },
				demo.Task{Every: 2 * time.Hour, Run: func(ctx context.Context, _ time.Time) error {
					archiveTick(ctx, archive, srv.Metrics, quiet, clock)
					return nil
				}},
				// The alert rules are evaluated as serve does, every
				// alerts.every of the demo's clock.
				demo.Task{Every: a.cfg.Alerts.EveryOrDefault(), Run: func(ctx context.Context, _ time.Time) error {
					_, err := alertEng.Evaluate(ctx)
					return err
				}},
				// A rescan pass a day, so the pipeline's freshness has a
				// history too; the live demo goes on with serve's passes.
				demo.Task{Every: 24 * time.Hour, Run: func(ctx context.Context, _ time.Time) error {
					if env.eng == nil {
						return nil
					}
					_, err := env.eng.RunPass(ctx)
					return err
				}})
			if err != nil {
				return fmt.Errorf("demo: simulate the past: %w", err)
			}
			fmt.Fprintf(a.stdout, "simulated the past %s in %s; going on in time-lapse\n", crawlkeeper.Duration(*past), time.Since(began).Round(100*time.Millisecond))
			liveSince.Store(ptr(time.Now()))
			return nil
		},
		simulate: func(ctx context.Context, srv *httpapi.Server, env *env) error {
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				if err := sim.Step(ctx, clock()); err != nil && ctx.Err() == nil {
					return fmt.Errorf("demo: %w", err)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-t.C:
				}
			}
		},
	})
}

func ptr[T any](v T) *T { return &v }
