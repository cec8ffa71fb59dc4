package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
	fs := a.newFlags("demo", "demo [--addr HOST:PORT] [--speed N] [--data DIR]")
	addr := fs.String("addr", "127.0.0.1:8080", "listen `address`")
	speed := fs.Float64("speed", 720, "simulated seconds per real second (720: a day every two minutes)")
	seed := fs.Uint64("seed", 1, "random `seed` of the simulation")
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
	// Time-lapse: the clock starts now and runs speed times faster.
	realStart, simStart := time.Now(), a.now()
	a.speed = *speed
	clock := func() time.Time {
		return simStart.Add(time.Duration(float64(time.Since(realStart)) * *speed))
	}
	fmt.Fprintf(a.stdout, "demo data in %s; one simulated day passes every %s\n", a.data, (time.Duration(float64(24*time.Hour) / *speed)).Round(time.Second))
	return serve(ctx, a, serveOptions{
		addr:         *addr,
		clock:        clock,
		archiveEvery: 10 * time.Second,
		simulate: func(ctx context.Context, srv *httpapi.Server, env *env) error {
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
			sim := demo.New(ingest, env.mon, clock(), *seed)
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
