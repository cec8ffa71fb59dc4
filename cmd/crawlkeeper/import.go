package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "import", summary: "bring an existing MongoDB crawl collection in through ingest (dedup applies)", run: runImport})
}

// importReport is what import prints with --json.
type importReport struct {
	From      string `json:"from"`
	Documents int    `json:"documents"`
	Inserted  int    `json:"inserted"`
	// Merged counts documents that were the same item as an earlier
	// document or an existing record: Identical ones changed nothing,
	// Changed ones became a new version (the previous one is in the
	// history).
	Merged        int                        `json:"merged"`
	Identical     int                        `json:"identical"`
	Changed       int                        `json:"changed"`
	Rejected      int                        `json:"rejected"`
	CrawledAtFrom map[string]int             `json:"crawled_at_from"`
	NoTime        int                        `json:"no_time"`
	Summary       *crawlkeeper.IngestSummary `json:"summary"`
}

func runImport(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("import", "import --from mongodb://HOST/DATABASE --collection C [--source S] [--round R] [--time-fields F,F...]")
	from := fs.String("from", "", "MongoDB `URL` of the existing crawl, with the database in the path")
	database := fs.String("database", "", "`database` to read (default: the one in --from)")
	collection := fs.String("collection", "", "`collection` holding the crawled items")
	source := fs.String("source", "", "source `name` for documents without _source (default: the collection name)")
	round := fs.String("round", "", "crawl `round` to record the documents in")
	timeFields := fs.String("time-fields", "", "comma-separated `fields` _crawled_at is taken from, earliest first wins (default: "+strings.Join(mongodb.DefaultTimeFields, ",")+")")
	batch := fs.Int("batch", 0, "items per transaction (default: limits.batch, 1000)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("import takes flags only, got %q", pos[0])
	}
	if *from == "" || *collection == "" {
		return usagef("import needs --from mongodb://HOST/DATABASE and --collection NAME")
	}
	if *source == "" {
		*source = *collection
	}
	if err := (crawlkeeper.Meta{Source: *source, Round: *round}).Validate([3]string{"--source (or the collection name)", "", "--round"}); err != nil {
		return usagef("%s", crawlkeeper.ErrorMessage(err))
	}
	opts := mongodb.ReadOptions{URL: *from, Database: *database, Collection: *collection}
	if *timeFields != "" {
		opts.TimeFields = splitComma(*timeFields)
	}

	env, err := a.createEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
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
	if isTerminal(a.stderr) {
		bar := progressbar.NewOptions64(-1, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("import"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		defer bar.Finish()
		opts.Total = func(n int64) { bar.ChangeMax64(n) }
		g.Progress = func(read int) { bar.Set(read) }
	}

	// The documents go through the same reader as `crawlkeeper ingest`
	// as JSON lines, so validation, dedup and the crawl monitor treat
	// them exactly like items pushed by a crawler.
	pr, pw := io.Pipe()
	type readResult struct {
		rep *mongodb.ReadReport
		err error
	}
	done := make(chan readResult, 1)
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		rep, err := mongodb.ReadCollection(ctx, opts, func(item map[string]any) error { return enc.Encode(item) })
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
		done <- readResult{rep, err}
	}()
	sum, ingestErr := g.Ingest(ctx, pr, crawlkeeper.Meta{Source: *source, Round: *round})
	pr.Close() // unblocks the reader when the ingest stopped early
	res := <-done
	if env.queue != nil {
		env.queue.Close()
	}
	if res.err != nil && (ingestErr == nil || crawlkeeper.ErrorCode(ingestErr) == crawlkeeper.EINVALID) {
		// The read failed (not the store): say so, with what was stored.
		if sum != nil && sum.Read > 0 {
			return fmt.Errorf("import stopped after %d documents (those are stored; importing again merges them): %w", sum.Read, res.err)
		}
		return res.err
	}
	rep := importReport{From: fmt.Sprintf("%s.%s", res.rep.Database, res.rep.Collection), Documents: res.rep.Documents,
		CrawledAtFrom: res.rep.CrawledAtFrom, NoTime: res.rep.NoTime, Summary: sum}
	if sum != nil {
		rep.Inserted, rep.Rejected = sum.Inserted, sum.Rejected
		rep.Identical = sum.Unchanged + sum.Refreshed
		rep.Changed = sum.Changed + sum.Revived
		rep.Merged = rep.Identical + rep.Changed
	}
	if a.json {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else {
		printImportReport(a, rep)
	}
	if ingestErr != nil {
		return fmt.Errorf("import stopped after %d documents (those are stored; importing again merges them): %w", sum.Read, ingestErr)
	}
	return nil
}

func printImportReport(a *app, r importReport) {
	fmt.Fprintf(a.stdout, "read %s from %s: %d new records, %d merged into an existing record (%d identical, %d changed), %d rejected\n",
		plural(r.Documents, "document"), r.From, r.Inserted, r.Merged, r.Identical, r.Changed, r.Rejected)
	if len(r.CrawledAtFrom) > 0 {
		names := make([]string, 0, len(r.CrawledAtFrom))
		for n := range r.CrawledAtFrom {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			label := n
			if n == mongodb.IDTime {
				label = "_id creation time"
			}
			parts[i] = fmt.Sprintf("%s %d", label, r.CrawledAtFrom[n])
		}
		fmt.Fprintf(a.stdout, "crawled_at kept from: %s\n", strings.Join(parts, ", "))
	}
	if r.NoTime > 0 {
		fmt.Fprintf(a.stdout, "%s without any time: crawled_at set to the import time\n", plural(r.NoTime, "document"))
	}
	if r.Summary != nil {
		for _, e := range r.Summary.Errors {
			fmt.Fprintf(a.stdout, "document %d: %s\n", e.Line, e.Error)
		}
	}
}
