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
	"github.com/crawlkeeper/crawlkeeper/processors"
)

func init() {
	register(&command{name: "scan", summary: "reprocess records: one rescan pass, continuous passes, or their status", run: runScan})
}

func runScan(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("scan", "scan [--once] [--readers N] [--workers M] [--period D] [--max-rate R] | scan status")
	once := fs.Bool("once", false, "run one full pass (resuming an unfinished one) and exit")
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
	rep, err := eng.RunPass(ctx)
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
	fmt.Fprintf(a.stdout, "pass %d (%s): %d processed, %d skipped, %d failed in %.1fs (%.0f records/s)\n",
		rep.Pass, how, rep.Processed, rep.Skipped, rep.Failed, rep.DurationS, rep.Rate)
	if rep.Failed > 0 {
		fmt.Fprintln(a.stdout, "failed records are listed by `crawlkeeper deadletters`")
	}
	return nil
}

// scanStatusJSON is what `scan status --json` prints.
type scanStatusJSON struct {
	Pass int64 `json:"pass"`
	// Position is the id below which every record of the pass is written.
	Position          int64      `json:"position"`
	PassStartedAt     *time.Time `json:"pass_started_at"`
	OldestProcessedAt *time.Time `json:"oldest_processed_at"`
	// Due counts active records never processed, processed for another
	// version or chain, or processed longer than a period ago.
	Due            int64                               `json:"due"`
	PassEnd        int64                               `json:"pass_end"`
	PassFinishedAt *time.Time                          `json:"pass_finished_at"`
	Chain          string                              `json:"chain"`
	Active         int64                               `json:"active"`
	NeverProcessed int64                               `json:"never_processed"`
	DeadLetters    int                                 `json:"dead_letters"`
	Sources        map[string]*processors.SourceCounts `json:"sources,omitempty"`
	StatsAt        *time.Time                          `json:"stats_at,omitempty"`
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
	cp, err := pipeline.LoadCheckpoint(ctx, env.store)
	if err != nil {
		return err
	}
	period := eng.Period
	if period <= 0 {
		period = crawlkeeper.DefaultPipelinePeriod
	}
	fr, err := env.store.Freshness(ctx, eng.Chain(), a.now().Add(-period))
	if err != nil {
		return err
	}
	dls, err := env.store.DeadLetters(ctx, 1<<30)
	if err != nil {
		return err
	}
	st := scanStatusJSON{Chain: eng.Chain(), OldestProcessedAt: fr.OldestProcessedAt, Due: fr.Due,
		Active: fr.Active, NeverProcessed: fr.NeverProcessed, DeadLetters: len(dls)}
	if cp != nil {
		started := cp.StartedAt
		st.Pass, st.Position, st.PassStartedAt, st.PassEnd, st.PassFinishedAt = cp.Pass, cp.Position(), &started, cp.End, cp.FinishedAt
	}
	if ss, err := processors.LoadStats(ctx, env.store); err != nil {
		return err
	} else if ss != nil {
		st.Sources, st.StatsAt = ss.Sources, &ss.At
	}
	if a.json {
		return a.printJSON(st)
	}
	if cp == nil {
		fmt.Fprintln(a.stdout, "no pass has run yet: start one with `crawlkeeper scan --once` or `crawlkeeper serve`")
	} else if cp.FinishedAt != nil {
		fmt.Fprintf(a.stdout, "pass %d finished %s (started %s, ids up to %d)\n", cp.Pass, cp.FinishedAt.Format(time.RFC3339), cp.StartedAt.Format(time.RFC3339), cp.End)
	} else {
		fmt.Fprintf(a.stdout, "pass %d at id %d of %d (started %s)\n", cp.Pass, cp.Position(), cp.End, cp.StartedAt.Format(time.RFC3339))
	}
	oldest := "never"
	if fr.OldestProcessedAt != nil {
		oldest = fr.OldestProcessedAt.Format(time.RFC3339)
	}
	fmt.Fprintf(a.stdout, "chain %s: %d active, %d due (%d never processed), oldest processed_at %s, %d dead letters\n",
		st.Chain, fr.Active, fr.Due, fr.NeverProcessed, oldest, len(dls))
	return nil
}
