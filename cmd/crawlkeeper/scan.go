package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

func init() {
	register(&command{name: "scan", summary: "reprocess records: one rescan pass, continuous passes, or their status", run: runScan})
}

func runScan(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("scan", "scan [--once [--wait D]] [--readers N] [--workers M] [--period D] [--max-rate R] | scan status")
	once := fs.Bool("once", false, "run one full pass (resuming an unfinished one) and exit")
	waitText := fs.String("wait", "", "with --once, wait up to this `duration` for the scan lease another process holds (default: refuse at once)")
	var pf pipelineFlags
	pf.register(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && pos[0] == "status":
		return scanStatus(ctx, a, pf)
	case len(pos) > 0:
		return usagef("scan takes no arguments besides status, got %q", pos)
	}
	var wait time.Duration
	if *waitText != "" {
		d, err := crawlkeeper.ParseDuration(*waitText)
		if err != nil || d < 0 || !*once {
			return usagef("--wait %q: use a duration such as 5m, with --once", *waitText)
		}
		wait = d.D()
	}
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	eng, release, err := env.engine(pf, logger)
	if err != nil {
		return err
	}
	defer release()
	if !*once {
		// Continuous: passes paced over the period, and real time when a
		// server queue brings other processes' notifications.
		if a.queueURL != "" {
			if err := env.openQueue(ctx); err != nil {
				return err
			}
			eng.Queue = env.queue
		}
		takeOverDeadLeases(ctx, env.store, logger, pipeline.ScanLease)
		fmt.Fprintf(a.stderr, "scanning continuously with %s; stop with Ctrl-C\n", eng.Chain())
		if err := eng.Run(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		return nil
	}

	// One pass runs as fast as --max-rate allows, unless --period is
	// given: then it is spread over that period.
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "period" {
			eng.Pace = true
		}
	})
	if err := eng.Init(ctx); err != nil {
		return err
	}
	var bar *progressbar.ProgressBar
	if isTerminal(a.stderr) && !a.json {
		eng.Progress = func(p pipeline.Progress) {
			if bar == nil {
				bar = progressbar.NewOptions64(p.End-p.Start,
					progressbar.OptionSetWriter(a.stderr),
					progressbar.OptionSetDescription(fmt.Sprintf("pass %d", p.Pass)),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionShowCount(),
					progressbar.OptionClearOnFinish(),
				)
			}
			bar.Set64(p.Position - p.Start)
		}
	}
	rep, err := runPassLeased(ctx, a, env, eng, wait)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		if rep != nil {
			return fmt.Errorf("pass %d stopped after %d records (the next run resumes from its checkpoint): %w", rep.Pass, rep.Processed, err)
		}
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	how := "new pass"
	if rep.Resumed {
		how = fmt.Sprintf("resumed after id %d", rep.From)
	}
	fmt.Fprintf(a.stdout, "pass %d (%s): %d processed (%d unchanged, not written), %d skipped, %d failed in %.1fs (%.0f records/s)\n",
		rep.Pass, how, rep.Processed, rep.Unchanged, rep.Skipped, rep.Failed, rep.DurationS, rep.Rate)
	if rep.Failed > 0 {
		fmt.Fprintln(a.stdout, "failed records are listed by `crawlkeeper deadletters`")
	}
	return nil
}

func scanStatus(ctx context.Context, a *app, pf pipelineFlags) error {
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	eng, release, err := env.engine(pf, nil)
	if err != nil {
		return err
	}
	defer release()
	st, err := pipeline.ReadStatus(ctx, env.store, eng.Chain(), eng.Period, a.now())
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(st)
	}
	switch {
	case st.PassStartedAt == nil:
		fmt.Fprintln(a.stdout, "no pass has run yet: start one with `crawlkeeper scan --once` or `crawlkeeper serve`")
	case st.PassFinishedAt != nil:
		fmt.Fprintf(a.stdout, "pass %d finished %s (started %s, ids up to %d)\n", st.Pass, st.PassFinishedAt.Format(time.RFC3339), st.PassStartedAt.Format(time.RFC3339), st.PassEnd)
	default:
		fmt.Fprintf(a.stdout, "pass %d at id %d of %d (started %s)\n", st.Pass, st.Position, st.PassEnd, st.PassStartedAt.Format(time.RFC3339))
	}
	oldest := "never"
	if st.OldestProcessedAt != nil {
		oldest = st.OldestProcessedAt.Format(time.RFC3339)
	}
	fmt.Fprintf(a.stdout, "chain %s: %d active, %d due (%d never processed), oldest processed_at %s, %d dead letters\n",
		st.Chain, st.Active, st.Due, st.NeverProcessed, oldest, st.DeadLetters)
	return nil
}
