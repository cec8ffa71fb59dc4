package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/memqueue"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "ingest", summary: "store items from JSON lines or a JSON array", run: runIngest})
}

func runIngest(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("ingest", "ingest [--source S] [--round N] [--target T] [--process] FILE|-")
	source := fs.String("source", "", "source `name` for items without _source")
	round := fs.String("round", "", "crawl `round` for items without _round")
	target := fs.String("target", "", "crawl `target` for items without _target")
	batch := fs.Int("batch", 0, "items per transaction (default: limits.batch, 1000)")
	process := fs.Bool("process", false, "run the processor chain over inserted and changed records as they are committed")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("ingest needs exactly one FILE (or - for standard input), got %d arguments", len(pos))
	}
	if err := (crawlkeeper.Meta{Source: *source, Target: *target, Round: *round}).Validate([3]string{"--source", "--target", "--round"}); err != nil {
		return usagef("%s", crawlkeeper.ErrorMessage(err))
	}
	var in io.Reader = a.stdin
	var size int64 = -1
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return crawlkeeper.Errorf(crawlkeeper.EINVALID, "open input: %v", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		in = f
	}
	if isTerminal(a.stderr) {
		bar := progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(a.stderr),
			progressbar.OptionSetDescription("ingest"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		defer bar.Finish()
		in = io.TeeReader(in, bar)
	}

	env, err := a.createEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	// With a server queue, other processes (serve, scan) process what
	// this ingest commits.
	if a.queueURL != "" {
		if err := env.openQueue(ctx); err != nil {
			return err
		}
	}
	g := env.ingester()
	g.BatchSize = *batch
	if err := env.monitorIngest(ctx, g); err != nil {
		return err
	}
	var rt *realtimeRun
	if *process {
		if rt, err = startRealtime(ctx, env); err != nil {
			return err
		}
		g.AfterCommit = append(g.AfterCommit, crawlkeeper.PublishTouched(rt.queue))
	}
	sum, ingestErr := g.Ingest(ctx, in, crawlkeeper.Meta{Source: *source, Round: *round, Target: *target})
	if rt != nil {
		rt.finish(a)
	}
	if env.queue != nil {
		env.queue.Close()
		if s := env.queue.Stats(); s.Dropped > 0 {
			fmt.Fprintf(a.stderr, "%d records could not be announced on %s; the next rescan pass processes them\n", s.Dropped, a.queueURL)
		}
	}
	if a.json {
		if err := a.printJSON(sum); err != nil {
			return err
		}
	} else {
		printIngestSummary(a.stdout, sum)
	}
	if sum.NoSource > 0 {
		fmt.Fprintf(a.stderr, "crawlkeeper: warning: %s had no source (no _source field and no --source) and %s stored under the empty source name\n",
			plural(sum.NoSource, "item"), map[bool]string{true: "was", false: "were"}[sum.NoSource == 1])
	}
	if ingestErr != nil {
		return fmt.Errorf("ingest stopped after %d items: %w", sum.Read, ingestErr)
	}
	return nil
}

func printIngestSummary(w io.Writer, s *crawlkeeper.IngestSummary) {
	fmt.Fprintf(w, "read %s: %s\n", plural(s.Read, "item"), joinNonEmpty(
		fmt.Sprintf("%d inserted", s.Inserted),
		fmt.Sprintf("%d changed", s.Changed),
		fmt.Sprintf("%d unchanged", s.Unchanged),
		nonZero(s.Revived, "revived"),
		nonZero(s.Refreshed, "refreshed in the archive"),
		fmt.Sprintf("%d rejected", s.Rejected),
	))
	if s.Marked > 0 {
		fmt.Fprintf(w, "%s recorded in the crawl monitor\n", plural(s.Marked, "crawl mark"))
	}
	if s.CrawledAtDefaulted > 0 {
		fmt.Fprintf(w, "%s without a readable _crawled_at: crawled_at set to the ingest time\n", plural(s.CrawledAtDefaulted, "item"))
	}
	if s.DateErrors > 0 {
		fmt.Fprintf(w, "%s could not be read; see date_errors in `crawlkeeper records`\n", plural(s.DateErrors, "event date"))
		const shown = 20
		for i, e := range s.DateErrorList {
			if i == shown {
				fmt.Fprintf(w, "(%d more date errors not listed; --json lists %d)\n", s.DateErrors-shown, len(s.DateErrorList))
				break
			}
			fmt.Fprintf(w, "line %d: %s\n", e.Line, e.Error)
		}
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "line %d: %s\n", e.Line, e.Error)
	}
	if s.ErrorsTruncated {
		fmt.Fprintf(w, "(%d more rejected items not listed)\n", s.Rejected-len(s.Errors))
	}
}

func nonZero(n int, what string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s", n, what)
}

// realtimeRun is ingest --process: an in-process queue drained by the
// pipeline's real-time workers while the ingest runs.
type realtimeRun struct {
	queue   *memqueue.Queue
	engine  *pipeline.Engine
	release func()
	done    chan error
}

func startRealtime(ctx context.Context, env *env) (*realtimeRun, error) {
	logger := slog.New(slog.NewTextHandler(env.a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	eng, release, err := env.engine(pipelineFlags{}, logger)
	if err != nil {
		return nil, err
	}
	if err := eng.Init(ctx); err != nil {
		release()
		return nil, err
	}
	// Large enough that processing slower than the ingest rarely drops; a
	// dropped notification is still processed by the next pass.
	q := memqueue.New(1 << 16)
	eng.Queue = q
	rt := &realtimeRun{queue: q, engine: eng, release: release, done: make(chan error, 1)}
	go func() { rt.done <- eng.RunRealtime(ctx) }()
	return rt, nil
}

// finish waits for the queued records to be processed and reports.
func (rt *realtimeRun) finish(a *app) {
	rt.queue.Close()
	err := <-rt.done
	rt.release()
	processed, _, failed, errs := rt.engine.RealtimeStats()
	if err != nil {
		fmt.Fprintf(a.stderr, "processing stopped: %v\n", err)
	}
	if !a.json {
		fmt.Fprintf(a.stderr, "processed %s with %s", plural(int(processed), "record"), rt.engine.Chain())
		if failed > 0 {
			fmt.Fprintf(a.stderr, "; %d failed (see `crawlkeeper deadletters`)", failed)
		}
		fmt.Fprintln(a.stderr)
	}
	if d := rt.queue.Stats().Dropped; d > 0 {
		fmt.Fprintf(a.stderr, "%d records were left to the next rescan pass (processing fell behind the ingest)\n", d)
	}
	if errs > 0 {
		fmt.Fprintf(a.stderr, "processing failed %d times (see the messages above); those records are left to the next rescan pass\n", errs)
	}
}
