package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/crawlkeeper/crawlkeeper/internal/rawbench"
	"github.com/crawlkeeper/crawlkeeper/recrawl"
	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "bench", summary: "measure the hot paths against the raw engine underneath", run: runBench})
}

// sweepResults are the size-dependent measures --sweep runs.
var sweepResults = []string{"ingest_new", "archive_select", "query_active", "scan_pass"}

func runBench(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("bench", "bench [--store URL] [--scale N | --sweep N,N,... [--chart FILE] | --replot DATA] [--only NAME,...] [--binary FILE] [--recrawl-rates SPEC] [--cpuprofile FILE] [--json]")
	scale := fs.Int("scale", 1_000_000, "number of records to generate")
	only := fs.String("only", "", "comma-separated result `names` to run (default: all)")
	sweep := fs.String("sweep", "", "comma-separated `sizes`: run "+strings.Join(sweepResults, ", ")+" at each and chart them")
	chart := fs.String("chart", "docs/bench-sweep.svg", "`file` the sweep chart is written to (.svg or .png)")
	replot := fs.String("replot", "", "draw --chart from a sweep's saved `data` (.json) instead of running")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to `file` (read it with go tool pprof)")
	binary := fs.String("binary", "", "crawlkeeper `executable` the whole-path results (cli_start_ms, cli_stats_ms, search_cli_ms) run in fresh processes (default: this one)")
	recrawlRates := fs.String("recrawl-rates", "default", "the change `rates` of the recrawl simulation's pages: "+recrawl.RatesHelp)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("bench takes no arguments")
	}
	if _, err := recrawl.ParseRates(*recrawlRates); err != nil {
		return usagef("--recrawl-rates: %v", err)
	}
	if *replot != "" {
		return replotSweep(*replot, *chart)
	}
	var sizes []int
	if *sweep != "" {
		for _, f := range splitComma(*sweep) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1000 {
				return usagef("--sweep takes sizes of at least 1000, not %q", f)
			}
			sizes = append(sizes, n)
		}
	} else if *scale < 1000 {
		return usagef("--scale must be at least 1000")
	}
	scratch := os.TempDir()
	if a.data != backends.DefaultDataDir {
		scratch = a.data
	}
	opts := bench.Options{
		Scale:        *scale,
		RecrawlRates: *recrawlRates,
		Dates:        dates.New(),
		MixedCorpus:  dates.MixedCorpus,
		DateBaselines: bench.DateBaselines{
			Library:        dates.NewLibrary(),
			Uncached:       dates.NewWithOptions(dates.Options{NoCache: true}),
			NewCached:      func() crawlkeeper.DateParser { return dates.New() },
			FallbackCorpus: dates.FallbackCorpus,
		},
		Open: func(ctx context.Context, name string) (crawlkeeper.Store, func(), error) {
			return backends.OpenScratch(ctx, a.storeURL, scratch, name)
		},
		OpenNormal: func(ctx context.Context, name string) (crawlkeeper.Store, func(), error) {
			u, drop, err := backends.NewScratch(ctx, a.storeURL, scratch, name)
			if err != nil {
				return nil, nil, err
			}
			st, err := backends.OpenStoreWith(ctx, u, "", crawlkeeper.StoreOptions{Durability: crawlkeeper.DurabilityNormal})
			if err != nil {
				drop()
				return nil, nil, err
			}
			return st, func() { st.Close(); drop() }, nil
		},
		Raw:   rawbench.For,
		Extra: benchExtras(a, scratch),
	}
	// The whole-path results build their minimal programs here.
	programs, err := os.MkdirTemp("", "crawlkeeper-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(programs)
	opts.Extra = append(opts.Extra, bench.Commands(commandSetup(a, scratch, *binary, programs)))
	if *only != "" {
		opts.Only = splitComma(*only)
	}
	if isTerminal(a.stderr) {
		var finish func()
		opts.Progress, finish = progressBars(a.stderr)
		defer finish()
	} else {
		opts.Progress = progressLines(a.stderr)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if sizes != nil {
		return runSweep(ctx, a, opts, sizes, *chart)
	}
	rep, err := bench.Run(ctx, opts)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	printReport(a.stdout, rep)
	return nil
}

// progressBars returns a progress function drawing one bar per step on w.
func progressBars(w io.Writer) (func(step string, done, total int), func()) {
	var bar *progressbar.ProgressBar
	var last string
	return func(step string, done, total int) {
			if step != last {
				if bar != nil {
					bar.Finish()
				}
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(fmt.Sprintf("%-26s", step)),
					progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
				last = step
			}
			bar.Set(done)
		}, func() {
			if bar != nil {
				bar.Finish()
			}
		}
}

// progressLines returns a progress function writing a timed line on w as
// each step starts, for logs.
func progressLines(w io.Writer) func(step string, done, total int) {
	var last string
	return func(step string, done, total int) {
		if step != last {
			fmt.Fprintf(w, "%s %s (%d)\n", time.Now().UTC().Format("15:04:05"), step, total)
			last = step
		}
	}
}

func printReport(w io.Writer, rep *bench.Report) {
	fmt.Fprintf(w, "crawlkeeper bench: %d records, %d CPUs, %s, %s\n\n", rep.Scale, rep.Machine.CPUs, rep.Machine.Go, rep.Date.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "name\tvalue\tbaseline\tunit\tratio\ttarget\tmet\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Name, num(r.Value), num(r.Baseline), r.Unit, ratioText(r.Ratio), r.Target, metText(r))
	}
	tw.Flush()
}

// metText is yes or NO against a target, and - for a result without one.
func metText(r bench.Result) string {
	switch {
	case strings.HasPrefix(r.Target, "none"):
		return "-"
	case r.Met:
		return "yes"
	}
	return "NO"
}

func ratioText(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g", v)
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
// the embedded monitor in a scratch store of --store's engine, or Redis
// with --monitor.
func benchExtras(a *app, scratch string) []bench.Measurement {
	setup := bench.MonitorSetup{Embedded: a.monitorURL == ""}
	setup.Open = func(ctx context.Context, name string) (crawlkeeper.Monitor, func(), error) {
		var st crawlkeeper.Store
		closeSt := func() {}
		if a.monitorURL == "" {
			var err error
			st, closeSt, err = backends.OpenScratch(ctx, a.storeURL, scratch, "monitor-"+name)
			if err != nil {
				return nil, nil, err
			}
		}
		monitorURL := a.monitorURL
		if monitorURL != "" {
			// Each measure gets fresh keys of its own, cleared at the end,
			// beside whatever the server holds.
			u, err := url.Parse(monitorURL)
			if err != nil {
				return nil, nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "--monitor %q: %v", monitorURL, err)
			}
			q := u.Query()
			q.Set("prefix", fmt.Sprintf("crawlkeeper-bench-%s-%d", name, time.Now().UnixNano()))
			u.RawQuery = q.Encode()
			monitorURL = u.String()
		}
		m, err := backends.OpenMonitor(ctx, monitorURL, st, a.cfg.MonitorOptions())
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
	}
	setup.Baseline = func(ctx context.Context) (bench.MarkBaseline, error) {
		if a.monitorURL != "" {
			return rawbench.RedisMarks(ctx, a.monitorURL)
		}
		st, closeSt, err := backends.OpenScratch(ctx, a.storeURL, scratch, "monitor-raw")
		if err != nil {
			return nil, err
		}
		m, err := rawbench.EmbeddedMarks(ctx, st)
		if err != nil {
			closeSt()
			return nil, err
		}
		return closingMarks{m, closeSt}, nil
	}
	return []bench.Measurement{bench.Pipeline, bench.Monitor(setup)}
}

// closingMarks closes the baseline's store after it.
type closingMarks struct {
	bench.MarkBaseline
	closeStore func()
}

func (c closingMarks) Close() { c.MarkBaseline.Close(); c.closeStore() }
