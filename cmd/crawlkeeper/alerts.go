package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/alerts"
)

func init() {
	register(&command{name: "alerts", summary: "show alerts, or evaluate the rules once (alerts eval)", run: runAlerts})
}

// alertEngine returns the alert engine of the environment: serve's
// pipeline chain and period for the freshness rule, the crawl monitor when
// one is open.
func (e *env) alertEngine(logger *slog.Logger) *alerts.Engine {
	cfg := e.a.cfg
	eng := &alerts.Engine{
		Store:  e.store,
		Config: cfg.Alerts,
		Now:    e.a.now,
		Period: cfg.Pipeline.Period.D(),
		Owner:  crawlkeeper.ProcessOwner(),
		Logger: logger,
	}
	if e.mon != nil {
		eng.Monitor = e.mon
	}
	if e.eng != nil {
		eng.Chain, eng.Period = e.eng.Chain(), e.eng.Period
	}
	return eng
}

// alertLoop evaluates the alert rules every alerts.every in serve.
func (e *env) alertLoop(logger *slog.Logger) func(context.Context) error {
	eng := e.alertEngine(logger.With("part", "alerts"))
	return func(ctx context.Context) error {
		return tick(ctx, alertTick(e.a.cfg.Alerts.EveryOrDefault(), e.a.speed), func(ctx context.Context) {
			if _, err := eng.Evaluate(ctx); err != nil && ctx.Err() == nil {
				logger.Error("alert evaluation failed", "err", err)
			}
		})
	}
}

// alertTick is the real time between two evaluations of rules evaluated
// every `every` on the app's clock. alerts.every is a time on that clock,
// like every time the rules measure and the Alerts page shows ("evaluated
// 12m ago, every 1h"): in the demo's time-lapse (speed clock seconds per
// second) an hour of the clock passes in 1/speed of an hour.
func alertTick(every time.Duration, speed float64) time.Duration {
	if speed > 1 {
		return time.Duration(float64(every) / speed)
	}
	return every
}

// alertsAPI serves GET /api/v1/alerts from the stored state.
type alertsAPI struct{ e *env }

func (a *alertsAPI) List(ctx context.Context, limit int) (any, error) {
	return alerts.List(ctx, a.e.store, a.e.a.cfg.Alerts, limit)
}

func runAlerts(ctx context.Context, a *app, args []string) error {
	eval := len(args) > 0 && args[0] == "eval"
	if eval {
		args = args[1:]
	}
	fs := a.newFlags("alerts", "alerts [--limit N]\n       crawlkeeper alerts eval     (evaluate the rules once and deliver to the webhooks)")
	limit := fs.Int("limit", 20, "show this many recent `events`")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("alerts takes no arguments other than eval, got %q", pos[0])
	}
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	if eval {
		// A store that cannot hold the embedded monitor, without
		// --monitor, has no crawl monitor: the round and field rules then
		// report that they need one.
		if _, err := env.monitor(ctx); err != nil && crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
			return err
		}
		eng := env.alertEngine(slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		eng.Owner = "" // a one-off evaluation by hand
		rep, err := eng.Evaluate(ctx)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(rep)
		}
		fmt.Fprintf(a.stdout, "evaluated %s: %d fired, %d resolved; %d webhook deliveries, %d pending\n",
			plural(len(rep.Rules), "rule"), len(rep.Fired), len(rep.Resolved), rep.Delivered, rep.Pending)
		for _, ev := range append(rep.Fired, rep.Resolved...) {
			fmt.Fprintln(a.stdout, "  "+ev.Text)
		}
		for _, r := range rep.Rules {
			if r.Error != "" {
				fmt.Fprintf(a.stdout, "  rule %s not evaluated: %s\n", r.Name, r.Error)
			}
		}
		return nil
	}
	l, err := alerts.List(ctx, env.store, a.cfg.Alerts, *limit)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(l)
	}
	if l.EvaluatedAt == nil {
		fmt.Fprintln(a.stdout, "alerts were never evaluated: configure alerts.rules and run serve (or `crawlkeeper alerts eval`)")
		return nil
	}
	fmt.Fprintf(a.stdout, "last evaluated %s: %d firing\n", l.EvaluatedAt.Format(time.RFC3339), len(l.Firing))
	for _, f := range l.Firing {
		fmt.Fprintf(a.stdout, "  FIRING %s since %s: %s\n", f.Rule, f.Since.Format(time.RFC3339), f.Message)
	}
	for _, r := range l.Rules {
		if r.Error != "" {
			fmt.Fprintf(a.stdout, "  rule %s not evaluated: %s\n", r.Name, r.Error)
		}
	}
	if l.Undelivered > 0 {
		fmt.Fprintf(a.stdout, "%s waiting for a webhook retry\n", plural(l.Undelivered, "delivery"))
	}
	if len(l.Recent) > 0 {
		fmt.Fprintln(a.stdout, "recent events:")
		for _, ev := range l.Recent {
			fmt.Fprintf(a.stdout, "  %s %s\n", ev.At.Format(time.RFC3339), ev.Text)
		}
	}
	return nil
}
