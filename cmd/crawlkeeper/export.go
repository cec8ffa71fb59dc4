package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/jsonlz"
	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "export", summary: "write records (and their history) to a JSON-lines file, .zst compressed", run: runExport})
}

// exportReport is what export prints with --json.
type exportReport struct {
	File     string `json:"file"`
	Active   int    `json:"active"`
	Archived int    `json:"archived"`
	History  int    `json:"history_versions"`
}

func runExport(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("export", "export [--archived | --all] [--source S] [--since TIME] [--history] [--overwrite] FILE.jsonl[.zst]")
	archived := fs.Bool("archived", false, "export archived records instead of active ones")
	all := fs.Bool("all", false, "export active and archived records")
	source := fs.String("source", "", "only records of this `source`")
	since := fs.String("since", "", "only records last updated at or after this RFC 3339 `time`")
	history := fs.Bool("history", false, "write each record with its kept versions: {\"record\":...,\"history\":[...]}")
	overwrite := fs.Bool("overwrite", false, "replace FILE if it exists")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("export needs exactly one FILE (name it .jsonl, or .jsonl.zst to compress), got %d arguments", len(pos))
	}
	path := pos[0]
	if !strings.HasSuffix(path, ".jsonl") && !strings.HasSuffix(path, ".jsonl.zst") && !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".zst") {
		return usagef("export file %q: name it FILE.jsonl, or FILE.jsonl.zst to compress", path)
	}
	if *archived && *all {
		return usagef("give either --archived or --all")
	}
	q := crawlkeeper.RecordQuery{Source: *source, Order: crawlkeeper.OrderID, Limit: 1000}
	if *since != "" {
		t, err := time.Parse(time.RFC3339Nano, *since)
		if err != nil {
			return usagef("--since %q: use an RFC 3339 time such as 2025-09-15T00:00:00Z", *since)
		}
		q.Since = t
	}
	if _, err := os.Stat(path); err == nil && !*overwrite {
		return usagef("export file %s exists: choose a new name or give --overwrite", path)
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()

	parts := []bool{*archived}
	if *all {
		parts = []bool{false, true}
	}
	var bar *progressbar.ProgressBar
	if isTerminal(a.stderr) {
		total := int64(-1)
		if stats, err := st.Stats(ctx); err == nil && q.Since.IsZero() {
			total = 0
			for name, s := range stats.Sources {
				if *source != "" && name != *source {
					continue
				}
				for _, arch := range parts {
					if arch {
						total += s.Archived
					} else {
						total += s.Active
					}
				}
			}
		}
		bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("export"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		defer bar.Finish()
	}

	w, err := jsonlz.Create(path)
	if err != nil {
		return err
	}
	rep := exportReport{File: path}
	for _, arch := range parts {
		q.Archived, q.Cursor = arch, ""
		for {
			page, err := st.List(ctx, q)
			if err != nil {
				w.Abort()
				return fmt.Errorf("export stopped after %d records (nothing was written): %w", rep.Active+rep.Archived, err)
			}
			for _, r := range page.Records {
				var line any = r
				if *history {
					h, err := st.History(ctx, r.ID)
					if err != nil {
						w.Abort()
						return fmt.Errorf("history of record %d: %w", r.ID, err)
					}
					rep.History += len(h)
					line = crawlkeeper.PurgeLine{Record: r, History: h}
				}
				if err := w.Write(line); err != nil {
					w.Abort()
					return fmt.Errorf("write %s: %w", path, err)
				}
				if arch {
					rep.Archived++
				} else {
					rep.Active++
				}
			}
			if bar != nil {
				bar.Set(rep.Active + rep.Archived)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	// Only a closed writer leaves the file under its name: an interrupted
	// export never looks complete.
	if err := w.Close(); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	fmt.Fprintf(a.stdout, "exported %s", plural(rep.Active+rep.Archived, "record"))
	if *all {
		fmt.Fprintf(a.stdout, " (%d active, %d archived)", rep.Active, rep.Archived)
	}
	if *history {
		fmt.Fprintf(a.stdout, " with %s", plural(rep.History, "earlier version"))
	}
	fmt.Fprintf(a.stdout, " to %s\n", path)
	return nil
}
