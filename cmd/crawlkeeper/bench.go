package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "bench", summary: "measure the hot paths against the raw engine underneath", run: runBench})
}

func runBench(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("bench", "bench [--store URL] [--scale N] [--only NAME,...] [--json]")
	scale := fs.Int("scale", 1_000_000, "number of records to generate")
	only := fs.String("only", "", "comma-separated result `names` to run (default: all)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("bench takes no arguments")
	}
	if *scale < 1000 {
		return usagef("--scale must be at least 1000")
	}
	scratch := os.TempDir()
	if a.data != backends.DefaultDataDir {
		scratch = a.data
	}
	opts := bench.Options{
		Scale:       *scale,
		Dates:       dates.New(),
		MixedCorpus: dates.MixedCorpus,
		DateBaselines: bench.DateBaselines{
			Library:        dates.NewLibrary(),
			Uncached:       dates.NewWithOptions(dates.Options{NoCache: true}),
			NewCached:      func() crawlkeeper.DateParser { return dates.New() },
			FallbackCorpus: dates.FallbackCorpus,
		},
		Open: func(ctx context.Context, name string) (crawlkeeper.Store, func(), error) {
			return backends.OpenScratch(ctx, a.storeURL, scratch, name)
		},
		Extra: benchExtras(a),
	}
	if *only != "" {
		opts.Only = splitComma(*only)
	}
	if isTerminal(a.stderr) {
		var bar *progressbar.ProgressBar
		var last string
		opts.Progress = func(step string, done, total int) {
			if step != last {
				if bar != nil {
					bar.Finish()
				}
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription(fmt.Sprintf("%-22s", step)),
					progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
				last = step
			}
			bar.Set(done)
		}
		defer func() {
			if bar != nil {
				bar.Finish()
			}
		}()
	}
	rep, err := bench.Run(ctx, opts)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	fmt.Fprintf(a.stdout, "crawlkeeper bench: %d records, %d CPUs, %s, %s\n\n", rep.Scale, rep.Machine.CPUs, rep.Machine.Go, rep.Date.Format(time.RFC3339))
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "name\tvalue\tbaseline\tunit\tratio\ttarget\tmet\t")
	for _, r := range rep.Results {
		met := "yes"
		if !r.Met {
			met = "NO"
		}
		ratio := "-"
		if r.Ratio != 0 {
			ratio = fmt.Sprintf("%.3g", r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Name, num(r.Value), num(r.Baseline), r.Unit, ratio, r.Target, met)
	}
	tw.Flush()
	return nil
}

func num(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 1000:
		s := fmt.Sprintf("%.0f", v)
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// benchExtras returns the measurements of the pipeline and the monitor:
// the embedded monitor in a scratch SQLite store, or Redis with
// --monitor.
func benchExtras(a *app) []bench.Measurement {
	return []bench.Measurement{bench.Pipeline, bench.Monitor(func(ctx context.Context, name string) (crawlkeeper.Monitor, func(), error) {
		var st crawlkeeper.Store
		closeSt := func() {}
		if a.monitorURL == "" {
			var err error
			st, closeSt, err = backends.OpenScratch(ctx, "", os.TempDir(), "monitor-"+name)
			if err != nil {
				return nil, nil, err
			}
		}
		m, err := backends.OpenMonitor(ctx, a.monitorURL, st, a.cfg.MonitorOptions())
		if err != nil {
			closeSt()
			return nil, nil, err
		}
		return m, func() {
			if c, ok := m.(interface{ Clear(context.Context) error }); ok {
				c.Clear(context.Background())
			}
			m.Close()
			closeSt()
		}, nil
	})}
}
